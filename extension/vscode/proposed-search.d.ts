// The parts of VS Code's proposed search APIs (`fileSearchProvider2`, `textSearchProvider2`) the
// extension uses, as VS Code 1.139 defines them. The editor lends them only to an extension it
// grants the proposals (`--enable-proposed-api change-control.change-control`); branch-search.ts
// asks for them at run time and does without them otherwise.
declare module 'vscode' {
  export interface FileSearchProviderOptions {
    folderOptions: { folder: Uri; includes: string[]; excludes: GlobPattern[] }[];
    session: object;
    maxResults: number;
  }

  export interface FileSearchProvider2 {
    provideFileSearchResults(
      pattern: string,
      options: FileSearchProviderOptions,
      token: CancellationToken,
    ): ProviderResult<Uri[]>;
  }

  export interface TextSearchQuery2 {
    pattern: string;
    isMultiline?: boolean;
    isRegExp?: boolean;
    isCaseSensitive?: boolean;
    isWordMatch?: boolean;
  }

  export interface TextSearchProviderOptions {
    folderOptions: { folder: Uri; includes: string[]; excludes: GlobPattern[]; encoding: string }[];
    maxResults: number;
    previewOptions: { matchLines: number; charsPerLine: number };
    maxFileSize: number | undefined;
    surroundingContext: number;
  }

  export interface TextSearchComplete2 {
    limitHit?: boolean;
  }

  export class TextSearchMatch2 {
    constructor(uri: Uri, ranges: { sourceRange: Range; previewRange: Range }[], previewText: string);
    uri: Uri;
    ranges: { sourceRange: Range; previewRange: Range }[];
    previewText: string;
  }

  export class TextSearchContext2 {
    constructor(uri: Uri, text: string, lineNumber: number);
    uri: Uri;
    text: string;
    lineNumber: number;
  }

  export type TextSearchResult2 = TextSearchMatch2 | TextSearchContext2;

  export interface TextSearchProvider2 {
    provideTextSearchResults(
      query: TextSearchQuery2,
      options: TextSearchProviderOptions,
      progress: Progress<TextSearchResult2>,
      token: CancellationToken,
    ): ProviderResult<TextSearchComplete2>;
  }

  export namespace workspace {
    /** Proposed (`fileSearchProvider2`): undefined, or throwing, where the editor does not grant it. */
    export const registerFileSearchProvider2:
      ((scheme: string, provider: FileSearchProvider2) => Disposable) | undefined;
    /** Proposed (`textSearchProvider2`): undefined, or throwing, where the editor does not grant it. */
    export const registerTextSearchProvider2:
      ((scheme: string, provider: TextSearchProvider2) => Disposable) | undefined;
  }
}

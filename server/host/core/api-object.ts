/** An object as the API shows it: at least its id and display text. */
export interface ApiObject {
  id: number;
  display: string;
  [key: string]: unknown;
}

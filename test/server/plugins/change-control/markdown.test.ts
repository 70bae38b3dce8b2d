import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { renderedKept, renderMarkdown } from '../../../../server/plugins/change-control/markdown';
import { suiteService } from '../../../support/service';
import { COMMENTS, created, ok, REQUESTS, REVIEWS } from './fixtures';
import { postComment, postReview, scene, world } from './reviews-comments-fixtures';
import { forSuite } from '../../../support/prepared';

/** Elements that must never come out of the sanitising filter. */
const FORBIDDEN_TAGS = [
  'script',
  'style',
  'iframe',
  'frame',
  'object',
  'embed',
  'form',
  'input',
  'button',
  'svg',
  'math',
  'base',
  'link',
  'meta',
  'textarea',
  'select',
  'template',
];
/** Where a link or image may lead once a browser resolves it against the page. */
const SAFE_PROTOCOLS = ['http:', 'https:', 'mailto:'];
const PAGE = 'https://change-control.example/requests/1/';

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * Parses rendered HTML as a browser would and lists everything that could act: a forbidden
 * element, an event-handler or style attribute, or a link or image target with another scheme.
 */
function activeParts(html: string): string[] {
  const doc = new JSDOM(`<!doctype html><body>${html}</body>`).window.document;
  const found: string[] = [];
  for (const el of Array.from(doc.body.querySelectorAll('*'))) {
    const tag = el.tagName.toLowerCase();
    if (FORBIDDEN_TAGS.includes(tag)) found.push(`<${tag}>`);
    for (const attr of Array.from(el.attributes)) {
      const name = attr.name.toLowerCase();
      if (name.startsWith('on') || name === 'style' || name === 'srcdoc' || name === 'formaction')
        found.push(`${tag}[${name}]`);
      if (['href', 'src', 'action', 'xlink:href', 'poster', 'background'].includes(name)) {
        // What a browser would follow: the parser has decoded entities; the URL parser resolves the rest.
        let protocol: string;
        try {
          protocol = new URL(attr.value, PAGE).protocol;
        } catch {
          protocol = 'unparseable';
        }
        if (!SAFE_PROTOCOLS.includes(protocol)) found.push(`${tag}[${name}=${attr.value}]`);
        // Stricter than a browser: no target even looks like another scheme once decoded.
        const decoded = decodeURIComponentSafe(attr.value).replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
        if (/^(javascript|vbscript|data|file):/i.test(decoded)) found.push(`${tag}[${name}~${decoded}]`);
      }
    }
  }
  return found;
}

const HOSTILE: Array<[string, string]> = [
  ['raw <script>', '<script>alert(1)</script>'],
  ['<script> inside a paragraph', 'Hello <script src="https://evil.example/x.js"></script> world'],
  ['<img onerror>', '<img src=x onerror=alert(1)>'],
  ['<img onerror> in a list', '- item <img src="x" onerror="alert(document.cookie)">'],
  ['<svg onload>', '<svg onload=alert(1)>'],
  ['<iframe>', '<iframe src="https://evil.example"></iframe>'],
  ['<a href=javascript:> as HTML', '<a href="javascript:alert(1)">click</a>'],
  ['<style>', '<style>body{display:none}</style>'],
  ['HTML block with an event handler', '<div onmouseover="alert(1)">\nhover\n</div>'],
  ['javascript: link', '[click](javascript:alert(1))'],
  ['javascript: link in mixed case', '[click](JaVaScRiPt:alert(1))'],
  ['javascript: link with an entity', '[click](jav&#x61;script:alert(1))'],
  ['javascript: link with &colon;', '[click](javascript&colon;alert(1))'],
  ['javascript: link with a control character', '[click](java&#10;script:alert(1))'],
  ['javascript: link with a NUL entity', '[click](&#0;javascript:alert(1))'],
  ['javascript: link in angle brackets', '[click](<javascript:alert(1)>)'],
  ['javascript: reference link', '[click][x]\n\n[x]: javascript:alert(1)'],
  ['javascript: autolink', '<javascript:alert(1)>'],
  ['javascript: image', '![x](javascript:alert(1))'],
  ['vbscript: link', '[click](vbscript:msgbox(1))'],
  ['file: link', '[click](file:///etc/passwd)'],
  [
    'data: image',
    '![pixel](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)',
  ],
  ['data: svg image', '![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)'],
  ['data: HTML link', '[open](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)'],
  ['data: autolink', '<data:text/html,<script>alert(1)</script>>'],
  ['title breaking out of its attribute', '[x](https://example.com "t\\" onmouseover=\\"alert(1)")'],
  ['href breaking out of its attribute', '[x](https://example.com/"onmouseover="alert(1))'],
];

describe('change control: Markdown rendered through the sanitising filter', () => {
  for (const [what, input] of HOSTILE) {
    it(`Review comment / ChangeComment text: hostile input renders inert (${what})`, () => {
      const html = renderMarkdown(input);
      assert.deepEqual(activeParts(html), [], `${input} rendered as ${html}`);
    });
  }

  it('the filter escapes raw HTML rather than dropping it: the words stay visible as text', () => {
    const html = renderMarkdown('<script>alert(1)</script> and <b>bold</b>');
    const text = new JSDOM(`<body>${html}</body>`).window.document.body.textContent!;
    assert.equal(text.trim(), '<script>alert(1)</script> and <b>bold</b>');
  });

  it('normal Markdown renders: emphasis, code, lists, headings, quotes, tables, strikethrough', () => {
    assert.equal(
      renderMarkdown('**bold** and *em* and `code`'),
      '<p><strong>bold</strong> and <em>em</em> and <code>code</code></p>\n',
    );
    assert.equal(renderMarkdown('# Title'), '<h1>Title</h1>\n');
    assert.equal(renderMarkdown('- one\n- two'), '<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n');
    assert.equal(renderMarkdown('1. one\n2. two'), '<ol>\n<li>one</li>\n<li>two</li>\n</ol>\n');
    assert.equal(renderMarkdown('> quoted'), '<blockquote>\n<p>quoted</p>\n</blockquote>\n');
    assert.equal(
      renderMarkdown('```\nconst x = "<b>";\n```'),
      '<pre><code>const x = &quot;&lt;b&gt;&quot;;\n</code></pre>\n',
    );
    assert.equal(renderMarkdown('~~gone~~'), '<p><s>gone</s></p>\n');
    assert.match(renderMarkdown('| a | b |\n|---|---|\n| 1 | 2 |'), /<table>[\s\S]*<td>1<\/td>[\s\S]*<\/table>/);
    assert.equal(renderMarkdown(''), '');
  });

  it('normal Markdown renders: safe links keep their targets (images become links to theirs); links open without referrer', () => {
    assert.equal(
      renderMarkdown('[build log](https://ci.example.com/job/1)'),
      '<p><a href="https://ci.example.com/job/1" rel="noopener noreferrer nofollow">build log</a></p>\n',
    );
    assert.equal(
      renderMarkdown('[mail](mailto:netops@example.com)'),
      '<p><a href="mailto:netops@example.com" rel="noopener noreferrer nofollow">mail</a></p>\n',
    );
    assert.equal(
      renderMarkdown('[see](#section)'),
      '<p><a href="#section" rel="noopener noreferrer nofollow">see</a></p>\n',
    );
    assert.equal(
      renderMarkdown('[rel](/api/status/)'),
      '<p><a href="/api/status/" rel="noopener noreferrer nofollow">rel</a></p>\n',
    );
    assert.equal(
      renderMarkdown('![diagram](https://example.com/d.png)'),
      '<p><a href="https://example.com/d.png" rel="noopener noreferrer nofollow">diagram</a></p>\n',
    );
    assert.equal(
      renderMarkdown('see https://example.com/x'),
      '<p>see <a href="https://example.com/x" rel="noopener noreferrer nofollow">https://example.com/x</a></p>\n',
    );
  });
});

describe('change control: rendered Markdown never loads a remote resource', () => {
  it('turns every image into a link (alt text, else the address, as its words): no element of the rendered HTML fetches anything', () => {
    const inputs = [
      '![tracking pixel](https://attacker.example/pixel.gif?reader=1)',
      '![](https://attacker.example/empty-alt.png)',
      '![ref][img]\n\n[img]: https://attacker.example/ref.png "title"',
      '[![badge](https://attacker.example/badge.svg)](https://ci.example.com/job/1)',
      'Inline ![a](//attacker.example/proto-relative.png) and ![b](/relative.png) too',
      '<img src="https://attacker.example/raw.png">',
    ];
    for (const input of inputs) {
      const html = renderMarkdown(input);
      const doc = new JSDOM(`<!doctype html><body>${html}</body>`).window.document;
      const loaders = Array.from(
        doc.body.querySelectorAll(
          'img, picture, source, video, audio, iframe, object, embed, link, script, [style], [background], [srcset]',
        ),
      );
      assert.deepEqual(
        loaders.map((el) => el.outerHTML),
        [],
        input,
      );
      assert.equal(doc.body.querySelectorAll('a a').length, 0, `no link inside a link: ${input}`);
    }
    assert.equal(
      renderMarkdown('![](https://attacker.example/empty-alt.png)'),
      '<p><a href="https://attacker.example/empty-alt.png" rel="noopener noreferrer nofollow">https://attacker.example/empty-alt.png</a></p>\n',
    );
    assert.equal(
      renderMarkdown('[![badge](https://x.example/b.svg)](https://ci.example.com/1)'),
      '<p><a href="https://ci.example.com/1" rel="noopener noreferrer nofollow">badge</a></p>\n',
    );
    assert.equal(
      renderMarkdown('![x](javascript:alert(1))'),
      '<p>![x](javascript:alert(1))</p>\n',
      'an unsafe target is no image and no link',
    );
  });
});

describe('change control: comment_html and text_html through the API', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));

  const hostile = HOSTILE.map(([, input]) => input).join('\n\n');

  it('Review field comment: comment_html is rendered through the sanitising filter (hostile input inert, on create, detail, list and evaluation)', async () => {
    const s = await scene(w);
    const r = await created(
      postReview(s.bob.client, { change_request: s.cr.id, decision: 'reject', comment: `**No.**\n\n${hostile}` }),
    );
    assert.equal(r.comment, `**No.**\n\n${hostile}`, 'the text is kept as written');
    assert.match(r.comment_html, /^<p><strong>No.<\/strong><\/p>/);
    assert.deepEqual(activeParts(r.comment_html), []);
    assert.deepEqual(activeParts((await ok(s.alice.client.get(`${REVIEWS}${r.id}/`))).comment_html), []);
    const listed = (await ok(s.alice.client.get(`${REVIEWS}?change_request_id=${s.cr.id}`))).results[0];
    assert.equal(listed.comment_html, r.comment_html);
    const evaluation = await ok(s.alice.client.get(`${REQUESTS}${s.cr.id}/evaluation/`));
    assert.equal(evaluation.rejections[0].comment_html, r.comment_html);
  });

  it('ChangeComment field text: text_html is sanitised on render (hostile input inert on create, edit and list)', async () => {
    const s = await scene(w);
    const c = await created(
      postComment(s.bob.client, { change_request: s.cr.id, change_diff: s.changes[0]!.id, text: hostile }),
    );
    assert.equal(c.text, hostile);
    assert.deepEqual(activeParts(c.text_html), []);
    const edited = await ok(s.bob.client.patch(`${COMMENTS}${c.id}/`, { text: `_edited_\n\n${hostile}` }));
    assert.match(edited.text_html, /^<p><em>edited<\/em><\/p>/);
    assert.deepEqual(activeParts(edited.text_html), []);
    const listed = (await ok(s.alice.client.get(`${COMMENTS}?change_request_id=${s.cr.id}`))).results[0];
    assert.deepEqual(activeParts(listed.text_html), []);
  });
});

describe('change control: rendered Markdown kept by its text', () => {
  it('renders a text read again as the first time, and keeps at most 4,096 texts and 1,000,000 characters', () => {
    const text = 'Kept *once*: [a link](https://example.com/x)';
    const first = renderMarkdown(text);
    assert.equal(renderMarkdown(text), first);
    assert.equal(
      first,
      '<p>Kept <em>once</em>: <a href="https://example.com/x" rel="noopener noreferrer nofollow">a link</a></p>\n',
    );
    for (let i = 0; i < 5000; i++) renderMarkdown(`comment ${i} **bold**`);
    assert.ok(renderedKept().entries <= 4096, `${renderedKept().entries} texts kept`);
    for (let i = 0; i < 200; i++) renderMarkdown(`${i} ${'long words '.repeat(700)}`);
    assert.ok(renderedKept().chars <= 1_000_000, `${renderedKept().chars} characters kept`);
    // A text evicted long ago renders as before.
    assert.equal(renderMarkdown(text), first);
    assert.equal(renderMarkdown(''), '');
  });
});

/**
 * GraphiQL offline as content-hashed files, each compressed once off the event loop (yoga renders
 * 9 MB per visit). Scripts are files (`script-src 'self'`); the options are JSON, never run.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';
import { GRAPHQL_PATH } from './paths.js';
import { chooseEncoding } from './plugins/compression.js';

export const GRAPHIQL_ASSETS_PATH = `${GRAPHQL_PATH}/graphiql/`;

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);
/** 1.29 MB for the 5.3 MB script in 0.9 s of CPU, against 1.12 MB in 21 s at the default 11. */
const BROTLI_QUALITY = 5;

const ENCODINGS = ['br', 'gzip'] as const;
type Encoding = (typeof ENCODINGS)[number];

interface StaticAsset {
  readonly type: string;
  readonly identity: Buffer;
  readonly encoded: Promise<Readonly<Record<Encoding, Buffer>>>;
  readonly etags: Readonly<Record<Encoding | 'identity', string>>;
  /** Content-hashed name: cached for a year; else (the page) revalidated on every visit. */
  readonly immutable: boolean;
}

function prepare(type: string, content: string | Buffer, immutable: boolean) {
  const identity = typeof content === 'string' ? Buffer.from(content) : content;
  const hash = createHash('sha256').update(identity).digest('base64url');
  const encoded = Promise.all([
    gzipAsync(identity, { level: 9 }),
    brotliAsync(identity, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [constants.BROTLI_PARAM_SIZE_HINT]: identity.length,
      },
    }),
  ]).then(([gzipped, brotli]) => ({ br: brotli, gzip: gzipped }));
  // Awaited by the first request for an encoded copy; a failure is that request's.
  encoded.catch(() => undefined);
  const asset: StaticAsset = {
    type,
    identity,
    encoded,
    etags: { identity: `"${hash}"`, gzip: `"${hash}-gz"`, br: `"${hash}-br"` },
    immutable,
  };
  return { asset, name: hash.slice(0, 16) };
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

async function buildFiles(options: GraphiQLOptions) {
  // The 9 MB module is imported on the first visit, never at start.
  const bundle = await import('@graphql-yoga/render-graphiql/graphiql');
  const assets = new Map<string, StaticAsset>();
  const add = (base: string, ext: string, type: string, content: string | Buffer) => {
    const { asset, name } = prepare(type, content, true);
    const path = `${GRAPHIQL_ASSETS_PATH}${base}.${name}.${ext}`;
    assets.set(path, asset);
    return path;
  };
  const addScript = (base: string, content: string) =>
    add(base, 'js', 'text/javascript; charset=utf-8', content);
  const css = add('graphiql', 'css', 'text/css; charset=utf-8', bundle.css);
  const script = addScript('graphiql', bundle.js);
  const [, faviconType, faviconBase64] = /^data:([^;,]+);base64,(.*)$/s.exec(bundle.favicon) ?? [];
  const favicon = faviconType
    ? add('favicon', 'ico', faviconType, Buffer.from(faviconBase64 ?? '', 'base64'))
    : bundle.favicon;
  const editorWorker = addScript('editor.worker', bundle.editorWorkerService);
  const jsonWorker = addScript('json.worker', bundle.jsonWorker);
  const graphqlWorker = addScript('graphql.worker', bundle.graphqlWorker);
  // What the package's page runs inline, as two files.
  const workers = { editorWorkerService: editorWorker, json: jsonWorker, graphql: graphqlWorker };
  const environment = addScript(
    'monaco-environment',
    `self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: function (moduleId, label) { return ${JSON.stringify(workers)}[label]; } };\n`,
  );
  const start = addScript(
    'start',
    "YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), " +
      "JSON.parse(document.getElementById('graphiql-options').textContent));\n",
  );
  // `<` escaped so no string in the JSON can close its <script> element.
  const optionsJson = JSON.stringify(options).replace(/</g, '\\u003c');
  const html = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8" />',
    `<title>${escapeHtml(options.title || 'GraphiQL')}</title>`,
    `<link rel="icon" href="${favicon}" />`,
    `<link rel="stylesheet" href="${css}" />`,
    '</head>',
    '<body id="body" class="no-focus-outline">',
    '<noscript>You need to enable JavaScript to run this app.</noscript>',
    '<div id="root"></div>',
    `<script id="graphiql-options" type="application/json">${optionsJson}</script>`,
    `<script src="${environment}"></script>`,
    `<script src="${script}"></script>`,
    `<script src="${start}"></script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
  const { asset: page } = prepare('text/html; charset=utf-8', html, false);
  return { assets, page };
}

function matches(ifNoneMatch: string | null, etag: string): boolean {
  return (ifNoneMatch ?? '')
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === etag || tag === '*');
}

/**
 * 304 when the browser's copy is current, else the kept bytes, in yoga's own Response (whatwg-node
 * writes its Buffer as is; a global Response copied 1.3 MB twice per visit).
 */
async function serveAsset(
  request: Request,
  asset: StaticAsset,
  fetchAPI: { Response: typeof Response },
): Promise<Response> {
  const encoding = chooseEncoding(request.headers.get('accept-encoding'), ENCODINGS);
  const etag = asset.etags[encoding ?? 'identity'];
  const headers: Record<string, string> = {
    etag,
    vary: 'Accept-Encoding',
    'cache-control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
  };
  if (matches(request.headers.get('if-none-match'), etag)) {
    return new fetchAPI.Response(null, { status: 304, headers });
  }
  const body = encoding ? (await asset.encoded)[encoding] : asset.identity;
  headers['content-type'] = asset.type;
  headers['content-length'] = String(body.length);
  if (encoding) headers['content-encoding'] = encoding;
  // A Buffer is a Uint8Array; the DOM typings want one over a plain ArrayBuffer.
  const bytes = request.method === 'HEAD' ? null : (body as Uint8Array<ArrayBuffer>);
  return new fetchAPI.Response(bytes, { headers });
}

/** Serves the page (a browser's GET /graphql) and the files under GRAPHIQL_ASSETS_PATH. */
export function useStaticGraphiQL(options: GraphiQLOptions): Plugin {
  let files: ReturnType<typeof buildFiles> | undefined;
  const load = () => {
    files ??= buildFiles(options).catch((error: unknown) => {
      files = undefined;
      throw error;
    });
    return files;
  };
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      const path = url.pathname;
      // yoga's rule for a GraphiQL visit: a GET that accepts HTML.
      const isPage =
        (path === GRAPHQL_PATH || path === `${GRAPHQL_PATH}/`) &&
        request.method === 'GET' &&
        (request.headers.get('accept') ?? '').includes('text/html');
      const isAsset = path.startsWith(GRAPHIQL_ASSETS_PATH);
      if (!isPage && !isAsset) return undefined;
      if (isAsset && request.method !== 'GET' && request.method !== 'HEAD') {
        endResponse(new fetchAPI.Response(null, { status: 405, headers: { allow: 'GET, HEAD' } }));
        return undefined;
      }
      return load().then(async ({ assets, page }) => {
        const asset = isPage ? page : assets.get(path);
        endResponse(
          asset
            ? await serveAsset(request, asset, fetchAPI)
            : new fetchAPI.Response('Not found: GraphiQL files are named by their content.', {
                status: 404,
                headers: { 'content-type': 'text/plain; charset=utf-8' },
              }),
        );
      });
    },
  };
}

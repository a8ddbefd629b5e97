// A toolhost tool component written in JavaScript against contract 0.2.0
// (`wit/0.2/plugin.wit`, world `toolhost:plugin/plugin@0.2.0`), built with
// componentize-js (`jco componentize`). A 0.2.0 tool returns its JSON as a
// string; `../js-notes/notes.js` is the same kind of component against
// 0.3.0, with content blocks and a form.
//
// - `fetch_bookmark` reads a URL with JavaScript's own `fetch` (standard
//   `wasi:http`, run by the host under the plugin's allow-list, like its
//   `http` import).
// - `add_bookmark` asks the user through the `confirm` import, then POSTs.
//   The host refuses the POST of a call without the user's yes.
// - one resource, `bookmarks://guide`.
//
// Build: `cargo xtask setup-js && cargo xtask build-plugins` writes
// `target/components/js_bookmarks.wasm`; see ../js-notes/README.md.

import { request as confirm } from "toolhost:plugin/confirm@0.1.0";

const GUIDE_URI = "bookmarks://guide";

const GUIDE = `# bookmarks

- \`fetch_bookmark\` reads a bookmarked page (GET) and returns its status and length.
- \`add_bookmark\` POSTs a bookmark to the bookmarks service, after the user confirms.
`;

const URL_FIELD = {
  type: "string",
  format: "uri",
  description: "The page's address.",
  examples: ["https://example.org/"],
};

const TOOLS = [
  {
    name: "fetch_bookmark",
    title: "Fetch a Bookmark",
    description:
      "Reads a bookmarked page and returns its HTTP status and length in bytes. Use it to check that a bookmark still works.",
    inputSchema: object({ url: URL_FIELD }, ["url"]),
    outputSchema: object({ status: { type: "integer" }, length: { type: "integer" } }, ["status", "length"]),
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: true },
  },
  {
    name: "add_bookmark",
    title: "Add a Bookmark",
    description:
      "Adds a page to the bookmarks service, after the user confirms. Use it when the user asks to keep a page.",
    inputSchema: object(
      {
        service: { ...URL_FIELD, description: "The bookmarks service's address.", examples: ["https://bookmarks.example/add"] },
        page: URL_FIELD,
      },
      ["service", "page"],
    ),
    outputSchema: object({ added: { type: "boolean" }, status: { type: "integer" } }, ["added", "status"]),
    annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  },
];

function object(properties, required) {
  return JSON.stringify({ type: "object", properties, required, additionalProperties: false });
}

function toolError(code, message) {
  return { code, message, hint: undefined, retryAfterMs: undefined };
}

async function send(url, init) {
  try {
    return await fetch(url, init);
  } catch (e) {
    throw toolError("permission-denied", `the request to ${url} was refused or failed: ${e && e.message ? e.message : e}`);
  }
}

async function call(name, args) {
  switch (name) {
    case "fetch_bookmark": {
      const response = await send(args.url);
      const body = new Uint8Array(await response.arrayBuffer());
      return JSON.stringify({ status: response.status, length: body.length });
    }
    case "add_bookmark": {
      const answer = confirm(`Add ${args.page} to the bookmarks at ${args.service}?`);
      if (answer !== "confirmed") {
        throw toolError("permission-denied", `the user did not confirm (${answer}); nothing was added`);
      }
      const response = await send(args.service, { method: "POST", body: args.page });
      return JSON.stringify({ added: response.ok, status: response.status });
    }
    default:
      throw toolError("not-found", `no tool named ${name}`);
  }
}

export const tools = {
  list() {
    return TOOLS;
  },
  call(name, argumentsJson) {
    return call(name, JSON.parse(argumentsJson));
  },
};

export const resources = {
  list() {
    return [
      {
        uri: GUIDE_URI,
        name: "bookmarks-guide",
        title: "Bookmarks Guide",
        description: "What the bookmark tools do.",
        mimeType: "text/markdown",
        size: undefined,
        annotations: undefined,
      },
    ];
  },
  templates() {
    return [];
  },
  read(uri, _variables) {
    if (uri !== GUIDE_URI) {
      throw toolError("not-found", `no resource ${uri}`);
    }
    return [{ uri, mimeType: "text/markdown", body: { tag: "text", val: GUIDE } }];
  },
};

export const prompts = {
  list() {
    return [];
  },
  get(name, _arguments) {
    throw toolError("not-found", `no prompt named ${name}`);
  },
};

export const completion = {
  complete(_target, _argument, _value, _context) {
    return { values: [], total: undefined, hasMore: false };
  },
};

// A toolhost tool component written in JavaScript: notes kept on a web
// service, built with componentize-js (`jco componentize`) against contract
// 0.3.0 (`wit/0.3/plugin.wit`, world `toolhost:plugin/plugin@0.3.0`).
//
// What it shows, each with the host doing the policing, not this code:
// - `fetch_note` reads over HTTP with JavaScript's own `fetch`. componentize-js
//   sends it through standard `wasi:http`, which the host runs under the same
//   policy as its `http` import: the plugin's allow-list, the address check,
//   the credentials the operator set, the audit record.
// - `save_note` changes something: it asks the user through the `confirm`
//   import first, and only then POSTs. The host refuses a POST from a call
//   whose user has not said yes, whatever this code does.
// - `note_card` returns content blocks beside its JSON: a PNG image and the
//   note as an embedded Markdown document.
// - `choose_tag` asks the user a form of its own (the `form` import) and
//   returns what was chosen. A form answer approves nothing.
// - one resource, `notes://guide`.
//
// Exports are plain objects named after the world's exports (`tools`,
// `resources`, `prompts`, `completion`); imports are ES modules named by
// their WIT interface and version. A WIT `result`'s error is thrown; an
// `option` is a value or `undefined`. Exported functions may be `async`:
// componentize-js runs the event loop until the promise settles, which is
// what lets a synchronous WIT export `await fetch(...)`.
//
// Build: `cargo xtask setup-js && cargo xtask build-plugins` writes
// `target/components/js_notes.wasm`; see README.md beside this file.

import { request as confirm } from "toolhost:plugin/confirm@0.1.0";
import { write as log } from "toolhost:plugin/log@0.1.0";
import { ask } from "toolhost:plugin/form@0.3.0";

const GUIDE_URI = "notes://guide";

const GUIDE = `# notes

Notes live on a web service the operator allows (\`[[plugins.js_notes.allow]]\`).

- \`fetch_note\` reads a note's URL (GET) and returns its status and text.
- \`save_note\` POSTs a note's text to a URL, after the user confirms.
- \`note_card\` returns a small image and the note as a Markdown document.
- \`choose_tag\` asks the user which tag a note gets.
`;

// A 1×1 PNG, the image `note_card` returns.
const PIXEL = new Uint8Array([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
  0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
  0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xde, 0x00, 0x00, 0x00,
  0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
  0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00,
  0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
]);

const URL_FIELD = {
  type: "string",
  format: "uri",
  description: "The note's address on the notes service.",
  examples: ["https://notes.example/notes/42"],
};

const TEXT_FIELD = {
  type: "string",
  minLength: 1,
  description: "The note's text.",
  examples: ["Call the supplier about order 1001."],
};

const READS = { readOnly: true, destructive: false, idempotent: true, openWorld: true };

// The tools, as `tools.list` returns them. Schemas are JSON text.
const TOOLS = [
  {
    name: "fetch_note",
    title: "Fetch a Note",
    description:
      "Reads one note from the notes service and returns its HTTP status and text. Use it before save_note to see what is there.",
    inputSchema: object({ url: URL_FIELD }, ["url"]),
    outputSchema: object({ status: { type: "integer" }, text: { type: "string" } }, ["status", "text"]),
    annotations: READS,
  },
  {
    name: "save_note",
    title: "Save a Note",
    description:
      "Saves a note's text to the notes service, after the user confirms. Use it when the user asks to keep a note.",
    inputSchema: object({ url: URL_FIELD, text: TEXT_FIELD }, ["url", "text"]),
    outputSchema: object({ saved: { type: "boolean" }, status: { type: "integer" } }, ["saved", "status"]),
    annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  },
  {
    name: "note_card",
    title: "Note Card",
    description:
      "Renders a note as a card: a small image and the note as a Markdown document. Use it to show a note to the user.",
    inputSchema: object({ text: TEXT_FIELD }, ["text"]),
    outputSchema: object({ characters: { type: "integer" } }, ["characters"]),
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  },
  {
    name: "choose_tag",
    title: "Choose a Tag",
    description:
      "Asks the user which tag a note gets and whether to star it, and returns the choice. Use it when the user has not said how to file a note.",
    inputSchema: object({ text: TEXT_FIELD }, ["text"]),
    outputSchema: object(
      { answer: { type: "string" }, tag: { type: ["string", "null"] }, starred: { type: ["boolean", "null"] } },
      ["answer", "tag", "starred"],
    ),
    annotations: { readOnly: true, destructive: false, idempotent: false, openWorld: false },
  },
];

// The form `choose_tag` asks (MCP's elicitation subset): a single select
// with titles and a default, and a boolean.
const TAG_FORM = {
  type: "object",
  properties: {
    tag: {
      type: "string",
      title: "Tag",
      oneOf: [
        { const: "work", title: "Work" },
        { const: "home", title: "Home" },
        { const: "later", title: "Later" },
      ],
      default: "later",
    },
    starred: { type: "boolean", title: "Star it", default: false },
  },
  required: ["tag"],
};

function object(properties, required) {
  return JSON.stringify({ type: "object", properties, required, additionalProperties: false });
}

// A tool error, thrown: componentize-js turns it into the `err` case of
// the WIT result.
function toolError(code, message, hint) {
  return { code, message, hint, retryAfterMs: undefined };
}

function json(value) {
  return { structured: JSON.stringify(value), content: [] };
}

// `fetch` rejects when the host refuses the request (a destination no rule
// allows, a POST without the user's yes) or the connection fails; the host
// logs which.
async function send(url, init) {
  try {
    return await fetch(url, init);
  } catch (e) {
    throw toolError(
      "permission-denied",
      `the request to ${url} was refused or failed: ${e && e.message ? e.message : e}`,
      "the host's log says why; an operator allows a destination with [[plugins.js_notes.allow]]",
    );
  }
}

async function call(name, args) {
  switch (name) {
    case "fetch_note": {
      const response = await send(args.url);
      const text = await response.text();
      log("info", `fetched ${args.url}: ${response.status}`);
      return json({ status: response.status, text });
    }
    case "save_note": {
      const answer = confirm(`Save the note "${args.text}" to ${args.url}?`);
      if (answer !== "confirmed") {
        throw toolError("permission-denied", `the user did not confirm (${answer}); nothing was saved`);
      }
      const response = await send(args.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text: args.text }),
      });
      log("info", `saved a note to ${args.url}: ${response.status}`);
      return json({ saved: response.ok, status: response.status });
    }
    case "note_card": {
      const characters = [...args.text].length;
      return {
        structured: JSON.stringify({ characters }),
        content: [
          { tag: "image", val: { mimeType: "image/png", data: PIXEL } },
          {
            tag: "resource",
            val: { uri: "notes://card", mimeType: "text/markdown", body: { tag: "text", val: `# Note\n\n${args.text}\n` } },
          },
        ],
      };
    }
    case "choose_tag": {
      const answer = ask(`How should the note "${args.text}" be filed?`, JSON.stringify(TAG_FORM));
      if (answer.tag === "accepted") {
        const values = JSON.parse(answer.val);
        return json({ answer: "accepted", tag: values.tag, starred: values.starred ?? null });
      }
      return json({ answer: answer.tag, tag: null, starred: null });
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
        name: "notes-guide",
        title: "Notes Guide",
        description: "What the notes tools do and which destinations they need.",
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

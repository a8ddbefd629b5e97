// A toolhost tool component written in TypeScript against contract 0.3.0
// (world `toolhost:plugin/plugin@0.3.0`): one read-only tool,
// `count_letters`, whose result carries a text block beside its JSON, and
// one resource, `letters://guide`.
//
// The types of every import and export come from the WIT contract:
// `jco guest-types` writes them (one `declare module 'toolhost:plugin/…'`
// per interface) into `types/` (for 0.3.0 through the step
// docs/second-language.md describes, which keeps `content@0.3.0` beside
// `content@0.2.0`), `tsc` checks this file against them and
// compiles it to JavaScript, and `jco componentize` builds the component
// from that JavaScript. A wrong field name or a missing export is a
// compile error here, not a trap in the host. See README.md beside this
// file for the commands.

import { write as log } from "toolhost:plugin/log@0.1.0";
import type * as Tools from "toolhost:plugin/tools@0.3.0";
import type * as Resources from "toolhost:plugin/resources@0.2.0";
import type * as Prompts from "toolhost:plugin/prompts@0.3.0";
import type { Block, ToolOutput } from "toolhost:plugin/content@0.3.0";
import type * as Completion from "toolhost:plugin/completion@0.2.0";
import type { ToolDefinition, ToolError } from "toolhost:plugin/types@0.1.0";

const GUIDE_URI = "letters://guide";

const GUIDE = `# count_letters

Counts the letters of a text (characters with an upper and a lower case:
not digits, spaces or punctuation) and names the most common one, so a
model does not estimate them.
`;

const COUNT_LETTERS: ToolDefinition = {
  name: "count_letters",
  title: "Count Letters",
  description:
    "Counts the letters of a text and names the most common one. Use it when exact letter counts matter.",
  inputSchema: JSON.stringify({
    type: "object",
    properties: {
      text: {
        type: "string",
        description: "The text whose letters are counted.",
        examples: ["Mississippi"],
      },
    },
    required: ["text"],
    additionalProperties: false,
  }),
  outputSchema: JSON.stringify({
    type: "object",
    properties: {
      letters: { type: "integer" },
      most_common: { type: ["string", "null"] },
    },
    required: ["letters", "most_common"],
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
};

/** The `err` case of a WIT result: componentize-js turns a thrown value into it. */
function toolError(code: ToolError["code"], message: string): ToolError {
  return { code, message, hint: undefined, retryAfterMs: undefined };
}

function countLetters(text: string): { letters: number; most_common: string | null } {
  const counts = new Map<string, number>();
  for (const c of text) {
    // A letter has an upper and a lower case. (The engine componentize-js
    // embeds has no Unicode property escapes such as `\p{L}`.)
    if (c.toLowerCase() !== c.toUpperCase()) {
      counts.set(c, (counts.get(c) ?? 0) + 1);
    }
  }
  let best: string | null = null;
  let letters = 0;
  for (const [c, n] of counts) {
    letters += n;
    if (best === null || n > (counts.get(best) ?? 0)) {
      best = c;
    }
  }
  return { letters, most_common: best };
}

export const tools: typeof Tools = {
  list: () => [COUNT_LETTERS],
  call(name, argumentsJson) {
    if (name !== COUNT_LETTERS.name) {
      throw toolError("not-found", `no tool named ${name}`);
    }
    const { text } = JSON.parse(argumentsJson) as { text: string };
    const counted = countLetters(text);
    log("info", `counted ${counted.letters} letters`);
    // The sentence a person reads, as a content block after the JSON.
    const sentence: Block = {
      tag: "text",
      val:
        counted.most_common === null
          ? "The text has no letters."
          : `The text has ${counted.letters} letters; the most common is "${counted.most_common}".`,
    };
    const output: ToolOutput = { structured: JSON.stringify(counted), content: [sentence] };
    return output;
  },
};

export const resources: typeof Resources = {
  list: () => [
    {
      uri: GUIDE_URI,
      name: "letters-guide",
      title: "Letters Guide",
      description: "How count_letters counts.",
      mimeType: "text/markdown",
    },
  ],
  templates: () => [],
  read(uri) {
    if (uri !== GUIDE_URI) {
      throw toolError("not-found", `no resource ${uri}`);
    }
    return [{ uri, mimeType: "text/markdown", body: { tag: "text", val: GUIDE } }];
  },
};

export const prompts: typeof Prompts = {
  list: () => [],
  get(name) {
    throw toolError("not-found", `no prompt named ${name}`);
  },
};

export const completion: typeof Completion = {
  complete: () => ({ values: [], hasMore: false }),
};

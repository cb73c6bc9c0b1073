"""The text of the generated TypeScript runtime (`squeezeRuntime.ts`): Node's standard library only.

Runs as is on Node >= 22.6 with `node --experimental-strip-types` (no flag from 22.18 and 23.6; Node 20
cannot load .ts files), or after `tsc`: no enums, namespaces or parameter properties. Placeholders are `__NAME__` tokens replaced with JSON literals; never a secret.
"""

# ruff: noqa: E501  (the template is generated code, wrapped for reading, not for this linter)
from __future__ import annotations

__all__ = ["TS_RUNTIME"]

TS_RUNTIME = r"""// Runtime of the Code Mode modules written by `mcpsqueeze install-commands --lang typescript`.
//
// Talks to a running `mcpsqueeze serve` session (docs/session-api.md) with Node's standard library only:
// node:http over the Unix socket, fetch over loopback TCP. Where the session is: MCPSQUEEZE_SOCKET, else
// MCPSQUEEZE_URL (+ MCPSQUEEZE_TOKEN_FILE), else the place it was when these files were written. A TCP
// session's token is read from its 0600 token file on every call; no secret is stored in this file.
// Runs on Node >= 22.6 as is: `node --experimental-strip-types main.ts` (no flag from Node 22.18 and 23.6;
// Node 20 cannot load .ts files: compile these with tsc first there).

import { request } from "node:http";
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";

const GENERATED_SOCKET: string | null = __SOCKET__;
const GENERATED_URL: string | null = __URL__;
const GENERATED_TOKEN_FILE: string | null = __TOKEN_FILE__;
const TIMEOUT_MS = 600_000;

export interface Truncation {
  message?: string;
  response_id?: string;
  original_response_file?: string;
  report?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface CallToolResult {
  content?: Array<{ type: string; text?: string; [key: string]: unknown }>;
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface Squeezed {
  truncation: Truncation | null;
  responseId: string | null;
  action: string;
  result: CallToolResult;
}

export class SqueezeError extends Error {}

export class SqueezeSessionError extends SqueezeError {
  code: string;
  status: number | null;
  constructor(message: string, code: string = "unreachable", status: number | null = null) {
    super(message);
    this.name = "SqueezeSessionError";
    this.code = code;
    this.status = status;
  }
}

export class SqueezeToolError extends SqueezeError {
  server: string;
  tool: string;
  result: CallToolResult;
  constructor(server: string, tool: string, message: string, result: CallToolResult) {
    super(`${server}.${tool} failed: ${message}`);
    this.name = "SqueezeToolError";
    this.server = server;
    this.tool = tool;
    this.result = result;
  }
}

const byObject = new WeakMap<object, Squeezed>();
const byText = new Map<string, Squeezed>(); // text results are primitives: the latest 64, by value

/** What a returned value carries besides its data: the truncation record, response id and raw result. */
export function squeezedOf(value: unknown): Squeezed | null {
  if (typeof value === "object" && value !== null) return byObject.get(value) ?? null;
  if (typeof value === "string") return byText.get(value) ?? null;
  return null;
}

/** The `_meta.truncation` record of a returned value (null when the result was not changed). */
export function truncationOf(value: unknown): Truncation | null {
  return squeezedOf(value)?.truncation ?? null;
}

interface Where {
  socketPath: string | null;
  url: string | null;
  tokenFile: string | null;
}

function where(): Where {
  const env = process.env;
  if (env.MCPSQUEEZE_SOCKET) return { socketPath: env.MCPSQUEEZE_SOCKET, url: null, tokenFile: null };
  if (env.MCPSQUEEZE_URL) return { socketPath: null, url: env.MCPSQUEEZE_URL, tokenFile: env.MCPSQUEEZE_TOKEN_FILE || null };
  return { socketPath: GENERATED_SOCKET, url: GENERATED_URL, tokenFile: env.MCPSQUEEZE_TOKEN_FILE || GENERATED_TOKEN_FILE };
}

function readToken(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    throw new SqueezeSessionError(`cannot read the session token file ${path} (${(error as Error).message}); set MCPSQUEEZE_TOKEN_FILE`);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || (info.mode & 0o077) !== 0) {
      throw new SqueezeSessionError(`the token file ${path} must be a regular file readable only by you (0600)`);
    }
    const token = readFileSync(fd, "ascii").trim();
    if (!token) throw new SqueezeSessionError(`the token file ${path} is empty; restart \`mcpsqueeze serve --listen\``);
    return token;
  } finally {
    closeSync(fd);
  }
}

function overSocket(socketPath: string, method: string, path: string, body: string | undefined): Promise<[number, string]> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Host: "localhost" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      headers["Content-Length"] = String(Buffer.byteLength(body));
    }
    const req = request({ socketPath, path, method, headers, timeout: TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve([res.statusCode ?? 0, Buffer.concat(chunks).toString("utf8")]));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", (error: Error) =>
      reject(new SqueezeSessionError(`cannot reach the mcpsqueeze session at ${socketPath} (${error.message}); is \`mcpsqueeze serve\` running?`)),
    );
    if (body !== undefined) req.write(body);
    req.end();
  });
}

async function overTcp(url: string, tokenFile: string | null, method: string, path: string, body: string | undefined): Promise<[number, string]> {
  const base = new URL(url);
  if (base.protocol !== "http:" || !["127.0.0.1", "localhost", "[::1]"].includes(base.hostname)) {
    throw new SqueezeSessionError(`${url} is not a loopback http:// address; the token goes to loopback only`);
  }
  if (!tokenFile) throw new SqueezeSessionError("a TCP session needs its token file: set MCPSQUEEZE_TOKEN_FILE");
  const headers: Record<string, string> = { Authorization: `Bearer ${readToken(tokenFile)}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(new URL(path, base), { method, headers, body, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    throw new SqueezeSessionError(`cannot reach the mcpsqueeze session at ${url} (${(error as Error).message}); is \`mcpsqueeze serve\` running?`);
  }
  return [response.status, await response.text()];
}

async function send(method: string, path: string, payload?: unknown): Promise<any> {
  const at = where();
  const body = payload === undefined ? undefined : JSON.stringify(payload);
  let status: number;
  let text: string;
  if (at.socketPath) {
    [status, text] = await overSocket(at.socketPath, method, path, body);
  } else if (at.url) {
    [status, text] = await overTcp(at.url, at.tokenFile, method, path, body);
  } else {
    throw new SqueezeSessionError("no session address: set MCPSQUEEZE_SOCKET or MCPSQUEEZE_URL");
  }
  let reply: any;
  try {
    reply = text ? JSON.parse(text) : null;
  } catch {
    throw new SqueezeSessionError(`the session sent HTTP ${status} without JSON`, "bad_reply", status);
  }
  if (status !== 200) {
    const error = (reply && reply.error) || {};
    throw new SqueezeSessionError(String(error.message || `HTTP ${status}`), String(error.code || "http"), status);
  }
  return reply;
}

function textOf(result: CallToolResult): string {
  return (result.content ?? [])
    .filter((block) => block && block.type === "text" && typeof block.text === "string")
    .map((block) => block.text as string)
    .join("\n");
}

function squeezed(result: CallToolResult, action: string, responseId: string | null): unknown {
  const meta = (result._meta ?? {}) as Record<string, any>;
  const truncation = (meta.truncation ?? meta["mcpsqueeze/dedup"] ?? null) as Truncation | null;
  const text = textOf(result);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = text;
  }
  const record: Squeezed = { truncation, responseId: responseId ?? truncation?.response_id ?? null, action, result };
  if (typeof value === "object" && value !== null) {
    byObject.set(value, record);
  } else if (typeof value === "string") {
    byText.delete(value);
    byText.set(value, record);
    if (byText.size > 64) byText.delete(byText.keys().next().value as string);
  }
  return value;
}

/** The session's whole answer: {result: CallToolResult, action, response_id, ...}. */
export async function callTool(server: string, tool: string, args: Record<string, unknown>, full: boolean = false): Promise<any> {
  return send("POST", "/v1/call", { server, tool, arguments: args, full });
}

/** Call a tool: parsed JSON (or the text); throws SqueezeToolError when the tool reports an error. */
export async function invoke(server: string, tool: string, args: Record<string, unknown>, full: boolean = false): Promise<unknown> {
  const sent: Record<string, unknown> = Object.create(null); // so a key "__proto__" is kept, not a prototype
  for (const [key, value] of Object.entries(args)) if (value !== undefined) sent[key] = value;
  const reply = await callTool(server, tool, sent, full);
  const result: CallToolResult = reply.result ?? {};
  if (result.isError === true) throw new SqueezeToolError(server, tool, textOf(result), result);
  return squeezed(result, String(reply.action), reply.response_id ?? null);
}

/**
 * The original of a shrunk or deduplicated result, one JSON node of it (RFC 6901 `pointer`), a JMESPath
 * projection (`query`, e.g. "issues[].{key: key}"), a text window (`offset`, `length`), or exactly the
 * lines a preview's `[lines A-B folded]` marker names (`lines`, e.g. "120-180"). `grep` (a regular
 * expression) or `search` (words) answer, as text, the matching lines with their numbers (JSON: values
 * with their pointers), `context` lines around; `skip` pages. Never re-runs the tool.
 * JSON comes back parsed; a window or lines as text, byte for byte.
 */
export async function squeezeRecover(
  responseId: string,
  options: {
    pointer?: string; offset?: number; length?: number; query?: string; lines?: string;
    grep?: string; search?: string; ignore_case?: boolean; context?: number; skip?: number;
  } = {},
): Promise<unknown> {
  const query = new URLSearchParams();
  const keys = [
    "pointer", "offset", "length", "query", "lines", "grep", "search", "ignore_case", "context", "skip",
  ] as const;
  for (const key of keys) {
    if (options[key] !== undefined) query.set(key, String(options[key]));
  }
  const suffix = query.toString() ? `?${query}` : "";
  const reply = await send("GET", `/v1/recover/${encodeURIComponent(responseId)}${suffix}`);
  const text = textOf(reply.result ?? {});
  const asText = ["offset", "length", "lines", "grep", "search"] as const;
  if (asText.some((key) => options[key] !== undefined)) {
    return text;
  }
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export { squeezeRecover as squeeze_recover };
"""

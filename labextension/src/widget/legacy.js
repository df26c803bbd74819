// GNS3 Copilot chat widget (anywidget ES module, no build step).
//
// Renders the synced `turns` state (saved notebooks) and applies live custom messages
// from the kernel (see jupyter_gns3_copilot/widget.py for the protocol):
//   {type: "begin", turn, user}            a turn starts
//   {type: "ops", turn, batch, ops: [...]} {op: "append", index, text} | {op: "item", index, item}
// Live messages are reduced per model (in `initialize`, which anywidget runs before it
// delivers any message), so a view created after the first batches still shows the whole
// running turn. When a turn ends, the state holds it in full; a live rendering that
// differs from it (e.g. after a missing batch) is rebuilt from the state.
// Untrusted text only ever reaches the DOM through textContent / createTextNode.

const SVG_NS = "http://www.w3.org/2000/svg";
const LONG_OUTPUT_LINES = 14;
const LONG_OUTPUT_CHARS = 1500;

// ---------------------------------------------------------------------------------------
// DOM helpers

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    el.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return el;
}

// Small inline icons (paths drawn on a 16x16 grid), decorative: aria-hidden.
const ICONS = {
  spark: "M8 1.5l1.6 4.2 4.4.3-3.4 2.8 1.1 4.3L8 10.7l-3.7 2.4 1.1-4.3L2 6l4.4-.3z",
  tool: "M10.5 2a3.5 3.5 0 0 0-3.3 4.6L2.4 11.4a1.4 1.4 0 0 0 2 2l4.8-4.8A3.5 3.5 0 0 0 13.9 5l-2 2-2-.5-.5-2 2-2A3.5 3.5 0 0 0 10.5 2z",
  stop: "M4 4h8v8H4z",
  send: "M2 13.5l12-5.5L2 2.5l1.8 5.5zM3.8 8h6",
  alert: "M8 1.8l6.6 12H1.4zM8 6v3.6M8 11.4v.4",
};

function icon(name, extraClass) {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.setAttribute("class", "gns3c-icon" + (extraClass ? " " + extraClass : ""));
  const path = document.createElementNS(SVG_NS, "path");
  path.setAttribute("d", ICONS[name]);
  svg.append(path);
  return svg;
}

function formatSeconds(seconds) {
  if (seconds < 60) return seconds.toFixed(1) + " s";
  const total = Math.round(seconds);
  return Math.floor(total / 60) + " min " + String(total % 60).padStart(2, "0") + " s";
}

function formatInt(n) {
  return Number(n).toLocaleString("en-US");
}

// Same wording as render_text.format_stats.
function formatStats(stats) {
  const parts = [];
  if (!stats) return parts;
  if (stats.input_tokens != null || stats.output_tokens != null) {
    const tokensIn = stats.input_tokens || 0;
    const tokensOut = stats.output_tokens || 0;
    if (tokensIn || tokensOut || !stats.llm_calls) {
      parts.push(formatInt(tokensIn) + " in / " + formatInt(tokensOut) + " out tokens");
    } else {
      parts.push("tokens not reported");
    }
  }
  if (stats.llm_calls != null) {
    parts.push(stats.llm_calls + " model call" + (stats.llm_calls === 1 ? "" : "s"));
  }
  if (stats.elapsed != null) parts.push(formatSeconds(stats.elapsed));
  return parts;
}

function parseJson(text) {
  if (typeof text !== "string" || !text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------
// Safe Markdown: a small block + inline parser that builds DOM nodes (never HTML strings).

const RE_FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const RE_HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RE_HR = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const RE_QUOTE = /^ {0,3}>\s?/;
const RE_LIST = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const RE_TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function isBlockStart(line, next) {
  return (
    RE_FENCE.test(line) || RE_HEADING.test(line) || RE_HR.test(line) || RE_QUOTE.test(line) ||
    RE_LIST.test(line) || (line.includes("|") && next !== undefined && RE_TABLE_SEP.test(next))
  );
}

export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  renderBlocks(String(text).replace(/\r\n?/g, "\n").split("\n"), fragment);
  return fragment;
}

function renderBlocks(lines, parent) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    const fence = RE_FENCE.exec(line);
    if (fence) {
      const marker = fence[1];
      const body = [];
      i++;
      while (i < lines.length && !new RegExp("^ {0,3}" + marker[0] + "{" + marker.length + ",}\\s*$").test(lines[i])) {
        body.push(lines[i++]);
      }
      i++; // closing fence (or end of a still-streaming block)
      parent.append(codeBlock(body.join("\n"), fence[2]));
      continue;
    }
    const heading = RE_HEADING.exec(line);
    if (heading) {
      const level = Math.min(heading[1].length + 2, 6); // h3..h6: sized for a chat
      parent.append(h("h" + level, { class: "gns3c-md-h" + heading[1].length }, ...inline(heading[2])));
      i++;
      continue;
    }
    if (RE_HR.test(line)) {
      parent.append(h("hr"));
      i++;
      continue;
    }
    if (RE_QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && RE_QUOTE.test(lines[i])) body.push(lines[i++].replace(RE_QUOTE, ""));
      const quote = h("blockquote");
      renderBlocks(body, quote);
      parent.append(quote);
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && RE_TABLE_SEP.test(lines[i + 1])) {
      const rows = [line];
      i += 2;
      while (i < lines.length && lines[i].includes("|") && lines[i].trim()) rows.push(lines[i++]);
      parent.append(markdownTable(rows));
      continue;
    }
    if (RE_LIST.test(line)) {
      i = renderList(lines, i, parent);
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !(para.length && isBlockStart(lines[i], lines[i + 1]))) {
      para.push(lines[i++].trim());
    }
    const p = h("p");
    para.forEach((text, n) => {
      if (n) p.append(h("br"));
      p.append(...inline(text));
    });
    parent.append(p);
  }
}

// A list at the indent of lines[start]; returns the index after it. Items whose lines hold
// no nested list or blank line render inline (tight), others as blocks.
function renderList(lines, start, parent) {
  const first = RE_LIST.exec(lines[start]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const list = h(ordered ? "ol" : "ul");
  const startNumber = parseInt(first[2], 10);
  if (ordered && startNumber !== 1) list.setAttribute("start", startNumber);
  const items = [];
  let i = start;
  while (i < lines.length) {
    const line = lines[i];
    const match = RE_LIST.exec(line);
    const lineIndent = line.length - line.trimStart().length;
    if (match && match[1].length === indent && /\d/.test(match[2]) === ordered) {
      items.push([match[3]]);
    } else if (!line.trim()) {
      const next = lines[i + 1];
      const nextIndent = next === undefined ? 0 : next.length - next.trimStart().length;
      const continues = next !== undefined && next.trim() &&
        (nextIndent > indent || (RE_LIST.test(next) && nextIndent === indent));
      if (!continues) break;
      items[items.length - 1].push("");
    } else if (lineIndent > indent) {
      items[items.length - 1].push(line.slice(Math.min(lineIndent, indent + 2)));
    } else if (match || isBlockStart(line, lines[i + 1])) {
      break; // a list of another kind, or another block
    } else {
      items[items.length - 1].push(line.trim()); // lazy continuation
    }
    i++;
  }
  for (const body of items) {
    const li = h("li");
    const tight = body.every((l, n) => l.trim() && (n === 0 || !isBlockStart(l, body[n + 1])));
    if (tight) {
      body.forEach((text, n) => {
        if (n) li.append(h("br"));
        li.append(...inline(text.trim()));
      });
    } else {
      renderBlocks(body, li);
    }
    list.append(li);
  }
  parent.append(list);
  return i;
}

function markdownTable(rows) {
  const cells = (row) => {
    let text = row.trim();
    if (text.startsWith("|")) text = text.slice(1);
    if (text.endsWith("|") && !text.endsWith("\\|")) text = text.slice(0, -1);
    return text.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
  };
  const head = cells(rows[0]);
  const table = h("table", { class: "gns3c-md-table" });
  table.append(h("thead", {}, h("tr", {}, ...head.map((c) => h("th", {}, ...inline(c))))));
  const body = h("tbody");
  for (const row of rows.slice(1)) {
    body.append(h("tr", {}, ...cells(row).map((c) => h("td", {}, ...inline(c)))));
  }
  table.append(body);
  return h("div", { class: "gns3c-table-wrap" }, table);
}

function codeBlock(text, language) {
  const code = h("code", { text });
  if (language) code.className = "language-" + language;
  const copy = h("button", {
    type: "button",
    class: "gns3c-copy",
    "aria-label": "Copy code",
    text: "Copy",
  });
  copy.addEventListener("click", () => {
    const done = () => {
      copy.textContent = "Copied";
      setTimeout(() => (copy.textContent = "Copy"), 1500);
    };
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, () => {});
  });
  return h("div", { class: "gns3c-code" }, copy, h("pre", {}, code));
}

const RE_URL = /https?:\/\/[^\s<>()[\]`]*[^\s<>()[\]`.,;:!?'"*_]/y;
const ESCAPABLE = "\\`*_{}[]()#+-.!|~>";

function safeHref(url) {
  return /^https?:\/\//i.test(url) ? url : null;
}

function link(href, children) {
  return h("a", { href, target: "_blank", rel: "noopener noreferrer" }, ...children);
}

// Where `marker` (*, _, ** or __) closes emphasis opened before `from`, or -1: not after
// whitespace, `_` not inside a word, a single marker not part of a double one.
function closingDelimiter(text, marker, from) {
  const c = marker[0];
  for (let end = text.indexOf(marker, from); end >= 0; end = text.indexOf(marker, end + 1)) {
    const after = text[end + marker.length] || "";
    if (/\s/.test(text[end - 1])) continue;
    if (c === "_" && /\w/.test(after)) continue;
    if (marker.length === 1 && (after === c || text[end - 1] === c)) continue;
    return end;
  }
  return -1;
}

// Inline Markdown -> nodes: code spans, **strong**, *em* / _em_, ~~del~~, [links](http...),
// bare http(s) URLs, backslash escapes. Underscores inside words (device_name) stay text.
export function inline(text) {
  const out = [];
  let buffer = "";
  const flush = () => {
    if (buffer) out.push(document.createTextNode(buffer));
    buffer = "";
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "\\" && i + 1 < text.length && ESCAPABLE.includes(text[i + 1])) {
      buffer += text[i + 1];
      i += 2;
      continue;
    }
    if (c === "`") {
      let run = 1;
      while (text[i + run] === "`") run++;
      const fence = "`".repeat(run);
      let end = text.indexOf(fence, i + run);
      while (end >= 0 && text[end + run] === "`") end = text.indexOf(fence, end + run + 1);
      if (end > i) {
        flush();
        let code = text.slice(i + run, end);
        if (code.length > 2 && code.startsWith(" ") && code.endsWith(" ")) code = code.slice(1, -1);
        out.push(h("code", { text: code }));
        i = end + run;
        continue;
      }
      buffer += fence;
      i += run;
      continue;
    }
    if ((c === "*" || c === "_") && !(c === "_" && /\w/.test(text[i - 1] || ""))) {
      const marker = text[i + 1] === c ? c + c : c;
      const start = i + marker.length;
      const end = /\s/.test(text[start] || " ") ? -1 : closingDelimiter(text, marker, start + 1);
      if (end > 0) {
        flush();
        out.push(h(marker.length === 2 ? "strong" : "em", {}, ...inline(text.slice(start, end))));
        i = end + marker.length;
        continue;
      }
      buffer += marker;
      i += marker.length;
      continue;
    }
    if (c === "~" && text[i + 1] === "~") {
      const end = text.indexOf("~~", i + 2);
      if (end > i + 2) {
        flush();
        out.push(h("del", {}, ...inline(text.slice(i + 2, end))));
        i = end + 2;
        continue;
      }
    }
    if (c === "[") {
      const close = text.indexOf("](", i + 1);
      const end = close >= 0 ? text.indexOf(")", close + 2) : -1;
      if (close > i && end > close) {
        const label = text.slice(i + 1, close);
        const target = text.slice(close + 2, end).trim().split(/\s+/)[0] || "";
        const href = safeHref(target);
        if (href && !label.includes("[")) {
          flush();
          out.push(link(href, inline(label)));
          i = end + 1;
          continue;
        }
      }
    }
    if ((c === "h" || c === "H") && !/\w/.test(text[i - 1] || "")) {
      RE_URL.lastIndex = i;
      const match = RE_URL.exec(text);
      if (match) {
        flush();
        out.push(link(match[0], [match[0]]));
        i += match[0].length;
        continue;
      }
    }
    buffer += c;
    i++;
  }
  flush();
  return out;
}

// ---------------------------------------------------------------------------------------
// Tool results

function isDeviceList(value) {
  return (
    Array.isArray(value) && value.length > 0 &&
    value.every((e) => e && typeof e === "object" && "device_name" in e && "status" in e)
  );
}

const STATUS_LABELS = { success: "success", partial_success: "partial", failed: "failed" };

function statusBadge(status) {
  const known = status in STATUS_LABELS;
  return h("span", {
    class: "gns3c-status gns3c-status-" + (known ? status : "other"),
    text: known ? STATUS_LABELS[status] : String(status),
  });
}

function outputBlock(text, label) {
  const lines = text.replace(/\n+$/, "").split("\n");
  const pre = h("pre", { class: "gns3c-output", text: lines.join("\n") });
  if (lines.length <= LONG_OUTPUT_LINES && text.length <= LONG_OUTPUT_CHARS) return pre;
  const summary = h("summary", {}, (label || "Output") + " · " + lines.length + " lines");
  return h("details", { class: "gns3c-long" }, summary, pre);
}

function deviceTable(devices) {
  const table = h("table", { class: "gns3c-devices" });
  table.append(
    h("thead", {}, h("tr", {}, h("th", { scope: "col", text: "Device" }),
      h("th", { scope: "col", text: "Status" }), h("th", { scope: "col", text: "Output" }))),
  );
  const body = h("tbody");
  for (const device of devices) {
    const cell = h("td", { class: "gns3c-device-output" });
    if (device.error) cell.append(h("div", { class: "gns3c-device-error", text: String(device.error) }));
    if (device.blocked_info) {
      cell.append(h("div", { class: "gns3c-device-blocked", text: String(device.blocked_info) }));
    } else if (Array.isArray(device.blocked_commands) && device.blocked_commands.length) {
      const blocked = device.blocked_commands
        .map((b) => (typeof b === "string" ? b : b.command + (b.reason ? ": " + b.reason : "")))
        .join("; ");
      cell.append(h("div", { class: "gns3c-device-blocked", text: "Not sent: " + blocked }));
    }
    if (device.output) cell.append(outputBlock(String(device.output), "Output of " + device.device_name));
    else if (!device.error) cell.append(h("span", { class: "gns3c-muted", text: "(no output)" }));
    body.append(
      h("tr", { "data-status": device.status },
        h("th", { scope: "row", class: "gns3c-device-name", text: String(device.device_name) }),
        h("td", {}, statusBadge(device.status)),
        cell),
    );
  }
  table.append(body);
  return h("div", { class: "gns3c-table-wrap" }, table);
}

function valueView(value, depth) {
  if (isDeviceList(value)) return deviceTable(value);
  if (value === null || typeof value !== "object") {
    const text = value === null ? "null" : String(value);
    return text.includes("\n") ? outputBlock(text) : h("span", { class: "gns3c-value", text });
  }
  if (Array.isArray(value) && value.every((v) => v === null || typeof v !== "object")) {
    return h("span", { class: "gns3c-value", text: value.map(String).join(", ") || "(none)" });
  }
  if (Array.isArray(value) || depth >= 2) {
    return outputBlock(JSON.stringify(value, null, 2));
  }
  const table = h("table", { class: "gns3c-kv" });
  const body = h("tbody");
  for (const [key, v] of Object.entries(value)) {
    body.append(h("tr", { class: key === "error" ? "gns3c-kv-error" : null },
      h("th", { scope: "row", text: key }), h("td", {}, valueView(v, depth + 1))));
  }
  table.append(body);
  return table;
}

// Complete tool arguments: a key/value table (list items as code chips), or JSON text
// for shapes that do not fit one.
function argumentsView(value) {
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    return h("pre", { class: "gns3c-output", text: JSON.stringify(value, null, 2) });
  }
  const entries = Object.entries(value);
  if (!entries.length) return h("span", { class: "gns3c-muted", text: "(no arguments)" });
  const body = h("tbody");
  for (const [key, v] of entries) {
    let cell;
    if (Array.isArray(v) && v.every((x) => x === null || typeof x !== "object")) {
      cell = h("td", { class: "gns3c-chips" }, ...v.map((x) => h("code", { text: String(x) })));
    } else if (v !== null && typeof v === "object") {
      cell = h("td", {}, h("pre", { class: "gns3c-output", text: JSON.stringify(v, null, 2) }));
    } else {
      cell = h("td", {}, h("code", { text: String(v) }));
    }
    body.append(h("tr", {}, h("th", { scope: "row", text: key }), cell));
  }
  return h("table", { class: "gns3c-kv gns3c-args" }, body);
}

function resultView(output) {
  const value = parseJson(output);
  const box = h("div", { class: "gns3c-result" });
  if (value === undefined) {
    box.append(output ? outputBlock(output, "Result") : h("span", { class: "gns3c-muted", text: "(empty result)" }));
    return box;
  }
  box.append(valueView(value, 0));
  box.append(h("details", { class: "gns3c-raw" }, h("summary", { text: "Raw JSON" }),
    h("pre", { text: JSON.stringify(value, null, 2) })));
  return box;
}

function toolOutcome(item) {
  const value = parseJson(item.output);
  if (isDeviceList(value)) {
    const counts = {};
    for (const d of value) counts[d.status] = (counts[d.status] || 0) + 1;
    const failed = (counts.failed || 0) + (counts.partial_success || 0);
    const summary = Object.entries(counts)
      .map(([status, n]) => n + " " + (STATUS_LABELS[status] || status)).join(", ");
    return { label: summary, tone: failed ? (counts.success ? "warn" : "error") : "success" };
  }
  if (value && typeof value === "object" && !Array.isArray(value) && value.error) {
    return { label: "failed", tone: "error" };
  }
  return { label: "done", tone: "success" };
}

// ---------------------------------------------------------------------------------------
// Items

class TextView {
  constructor(item) {
    this.item = { kind: "text", text: item.text || "" };
    this.el = h("div", { class: "gns3c-md" });
    this.frame = 0;
    this.draw();
  }
  append(text) {
    this.item.text += text;
    if (!this.frame) this.frame = requestAnimationFrame(() => this.draw());
  }
  set(item) {
    this.item = { kind: "text", text: item.text || "" };
    this.draw();
  }
  draw() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.el.replaceChildren(renderMarkdown(this.item.text));
  }
  dispose() {
    if (this.frame) cancelAnimationFrame(this.frame);
  }
}

const TOOL_STATE_LABELS = {
  arguments: "writing arguments",
  ready: "ready",
  running: "running",
  stopped: "stopped",
};
const PROGRESS_LINES_SHOWN = 4;

class ToolView {
  constructor(item) {
    this.badge = h("span", { class: "gns3c-badge" });
    this.name = h("span", { class: "gns3c-tool-name" });
    this.args = h("pre", { class: "gns3c-tool-args" });
    this.argsView = h("div", { class: "gns3c-tool-args-view" });
    this.progress = h("ol", { class: "gns3c-progress", "aria-label": "Progress" });
    this.result = h("div", { class: "gns3c-tool-result" });
    this.el = h("section", { class: "gns3c-tool" },
      h("header", { class: "gns3c-tool-head" }, icon("tool"), this.name, this.badge),
      h("div", { class: "gns3c-label", text: "Arguments" }), this.args, this.argsView,
      this.progress, this.result);
    this.item = null;
    this.set(item);
  }
  set(item) {
    const previous = this.item || {};
    this.item = item;
    this.el.dataset.state = item.state;
    this.el.setAttribute("aria-label", "Tool call " + item.name);
    if (previous.name !== item.name) this.name.textContent = item.name;
    if (previous.arguments !== item.arguments || previous.complete !== item.complete) {
      // While streaming: the JSON text so far. Complete: a readable view of it (the text,
      // kept in the hidden <pre>, is what the view was made from).
      this.args.dataset.complete = String(!!item.complete);
      this.args.textContent = item.arguments;
      const value = item.complete ? parseJson(item.arguments || "{}") : undefined;
      this.args.hidden = value !== undefined;
      this.argsView.replaceChildren(value !== undefined ? argumentsView(value) : "");
      this.argsView.hidden = value === undefined;
    }
    const lines = item.progress || [];
    if (JSON.stringify(previous.progress) !== JSON.stringify(lines) || previous.state !== item.state) {
      // The latest few lines; a finished tool's result replaces them.
      const shown = lines.slice(-PROGRESS_LINES_SHOWN);
      const earlier = lines.length - shown.length;
      const more = earlier === 1 ? "1 earlier update" : earlier + " earlier updates";
      this.progress.replaceChildren(
        ...(earlier ? [h("li", { class: "gns3c-progress-more", text: more })] : []),
        ...shown.map((line) => h("li", {},
          line.node ? h("span", { class: "gns3c-progress-node", text: line.node + ":" }) : null,
          line.node ? " " : null,
          h("span", { text: line.message }),
          line.elapsed != null ? h("span", { class: "gns3c-muted", text: " · " + formatSeconds(line.elapsed) }) : null)));
      this.progress.hidden = !lines.length || item.state === "done";
    }
    if (item.output != null && previous.output !== item.output) {
      this.result.replaceChildren(h("div", { class: "gns3c-label", text: "Result" }), resultView(item.output));
    }
    if (item.state === "done") {
      const outcome = toolOutcome(item);
      this.badge.textContent = outcome.label;
      this.badge.dataset.tone = outcome.tone;
    } else {
      this.badge.textContent = TOOL_STATE_LABELS[item.state] || item.state;
      this.badge.dataset.tone = item.state === "stopped" ? "warn" : "active";
    }
  }
  dispose() {}
}

class ErrorView {
  constructor(item) {
    this.text = h("span");
    this.el = h("div", { class: "gns3c-error", role: "alert" }, icon("alert"), this.text);
    this.set(item);
  }
  set(item) {
    this.item = item;
    this.text.textContent = item.text;
  }
  dispose() {}
}

const ITEM_VIEWS = { text: TextView, tool: ToolView, error: ErrorView };

// ---------------------------------------------------------------------------------------
// Turns

const TURN_NOTES = {
  aborted: "Stopped: the turn was aborted.",
  interrupted: "Interrupted before the copilot finished.",
};

class TurnView {
  constructor(turn, stale) {
    this.user = h("div", { class: "gns3c-user-text" });
    this.userRow = h("div", { class: "gns3c-user" }, h("div", { class: "gns3c-who", text: "You" }), this.user);
    this.itemsEl = h("div", { class: "gns3c-items" });
    this.note = h("div", { class: "gns3c-note" });
    this.footer = h("footer", { class: "gns3c-footer" });
    this.el = h("article", { class: "gns3c-turn" },
      this.userRow,
      h("div", { class: "gns3c-assistant" },
        h("div", { class: "gns3c-who" }, icon("spark"), "Copilot"),
        this.itemsEl, this.note),
      this.footer);
    this.views = [];
    this.status = "running";
    this.stale = !!stale;
    this.setTurn(turn, true);
  }

  // Render from state (or from the live turn when `rebuild`); a running turn keeps the
  // items it got live, a finished one is rebuilt if its items differ from the state.
  setTurn(turn, rebuild) {
    this.user.textContent = turn.user || "";
    this.userRow.hidden = !turn.user;
    this.status = turn.status;
    if (rebuild || (turn.status !== "running" && this.signature() !== JSON.stringify(turn.items))) {
      for (const view of this.views) view.dispose();
      this.views = [];
      this.itemsEl.replaceChildren();
      turn.items.forEach((item, index) => this.setItem(index, item));
    }
    for (const view of this.views) if (view instanceof TextView && view.frame) view.draw();
    this.el.dataset.status = turn.status;
    this.el.setAttribute("aria-busy", String(turn.status === "running"));
    this.note.replaceChildren();
    if (turn.status === "running") {
      this.note.append(h("span", { class: "gns3c-spinner", "aria-hidden": "true" }),
        this.stale ? "Working (part of the stream was missed: the full turn shows when it ends)"
          : "Working");
    } else if (TURN_NOTES[turn.status]) {
      this.note.append(icon(turn.status === "aborted" ? "stop" : "alert"), TURN_NOTES[turn.status]);
    } else if (!turn.items.length && turn.status === "done") {
      this.note.append("(no answer)");
    }
    this.note.hidden = !this.note.childNodes.length;
    const parts = formatStats(turn.stats);
    this.footer.replaceChildren();
    if (turn.stats && turn.stats.title) {
      this.footer.append(h("span", { class: "gns3c-footer-title", text: turn.stats.title }));
    }
    for (const part of parts) this.footer.append(h("span", { text: part }));
    this.footer.hidden = !this.footer.childNodes.length;
  }

  signature() {
    return JSON.stringify(this.views.map((view) => view.item));
  }

  setItem(index, item) {
    const current = this.views[index];
    if (current && current.item.kind === item.kind) {
      current.set(item);
      return;
    }
    const view = new ITEM_VIEWS[item.kind](item);
    if (current) {
      current.dispose();
      current.el.replaceWith(view.el);
    } else {
      this.itemsEl.append(view.el);
    }
    this.views[index] = view;
  }

  applyOps(ops) {
    if (this.status !== "running" || this.stale) return;
    for (const op of ops) {
      if (op.op === "append") {
        const view = this.views[op.index];
        if (view instanceof TextView) view.append(op.text);
        else this.setItem(op.index, { kind: "text", text: op.text });
      } else if (op.op === "item") {
        this.setItem(op.index, op.item);
      }
    }
  }

  markStale() {
    this.stale = true;
    this.setTurn({ user: this.user.textContent, status: "running", items: [], stats: {} }, false);
  }

  dispose() {
    for (const view of this.views) view.dispose();
  }
}

// ---------------------------------------------------------------------------------------
// The live turn, per model: {turn, user, items, nextBatch, stale}, and the views to tell.
// Keyed by the synced `instance_id`: anywidget gives `initialize` and each `render`
// different proxy objects for the same model.

const LIVE = new Map();

function liveStore(model) {
  const key = model.get("instance_id");
  let store = LIVE.get(key);
  if (!store) {
    store = { live: null, views: new Set() };
    LIVE.set(key, store);
  }
  return store;
}

function applyOps(items, ops) {
  for (const op of ops) {
    if (op.op === "append") {
      const current = items[op.index];
      const text = current && current.kind === "text" ? current.text + op.text : op.text;
      items[op.index] = { kind: "text", text };
    } else if (op.op === "item") {
      items[op.index] = op.item;
    }
  }
}

function initialize({ model }) {
  const store = liveStore(model);
  const onMessage = (msg) => {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "begin") {
      store.live = { turn: msg.turn, user: msg.user, items: [], nextBatch: 0, stale: false };
      for (const view of store.views) view.begin(store.live);
    } else if (msg.type === "ops") {
      const live = store.live;
      if (!live || live.turn !== msg.turn || live.stale) return;
      if (msg.batch !== live.nextBatch) {
        live.stale = true; // a batch went missing: the state at the turn's end repairs it
        for (const view of store.views) view.stale(live.turn);
        return;
      }
      live.nextBatch++;
      applyOps(live.items, msg.ops);
      for (const view of store.views) view.ops(live.turn, msg.ops);
    }
  };
  model.on("msg:custom", onMessage);
  return () => {
    model.off("msg:custom", onMessage);
    LIVE.delete(model.get("instance_id"));
  };
}

// ---------------------------------------------------------------------------------------
// Server calls from the browser (the kernel is busy while a turn runs)

function pageConfig() {
  const el = document.getElementById("jupyter-config-data");
  if (!el) return {};
  try {
    return JSON.parse(el.textContent || "{}");
  } catch {
    return {};
  }
}

function xsrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)_xsrf=([^;]*)/);
  return match ? match[1] : "";
}

export function abortUrl(projectId, sessionId, baseUrl) {
  let base = baseUrl || pageConfig().baseUrl || "/";
  if (!base.endsWith("/")) base += "/";
  return base + "copilot/projects/" + encodeURIComponent(projectId) + "/chat/sessions/" +
    encodeURIComponent(sessionId) + "/abort";
}

async function requestAbort(projectId, sessionId) {
  const response = await fetch(abortUrl(projectId, sessionId), {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-XSRFToken": xsrfToken() },
    body: "{}",
  });
  if (!response.ok) {
    let detail = "";
    try {
      // The copilot's errors are {"error": {"message"}}; Jupyter's own {"message"}.
      const body = await response.json();
      detail = (body.error && body.error.message) || body.message || "";
    } catch {
      // not JSON: the status is all we can report
    }
    throw new Error("HTTP " + response.status + (detail ? ": " + detail : ""));
  }
}

// ---------------------------------------------------------------------------------------
// The widget

function render({ model, el }) {
  const projectName = h("span", { class: "gns3c-project" });
  const sessionTitle = h("span", { class: "gns3c-session" });
  const log = h("div", { class: "gns3c-log", role: "log", "aria-label": "Conversation" });
  const input = h("textarea", {
    class: "gns3c-input",
    rows: 1,
    "aria-label": "Message to the copilot",
    placeholder: "Ask a follow-up question (Enter to send, Shift+Enter for a new line)",
  });
  const send = h("button", { type: "button", class: "gns3c-send", "aria-label": "Send message" },
    icon("send"), h("span", { text: "Send" }));
  const stop = h("button", { type: "button", class: "gns3c-stop", "aria-label": "Stop the running turn" },
    icon("stop"), h("span", { text: "Stop" }));
  const status = h("div", { class: "gns3c-composer-status", role: "status", "aria-live": "polite" });
  const composer = h("div", { class: "gns3c-composer" }, input, send, stop);
  const root = h("div", { class: "gns3c", "data-lm-suppress-shortcuts": "true" },
    h("header", { class: "gns3c-header" },
      h("span", { class: "gns3c-brand" }, icon("spark"), "GNS3 Copilot"), projectName, sessionTitle),
    log, composer, status);
  el.append(root);

  const turns = [];
  let awaiting = false;
  let stopping = false;

  const running = () => turns.length > 0 && turns[turns.length - 1].status === "running";

  function setStatus(text, tone) {
    status.textContent = text || "";
    status.dataset.tone = tone || "";
  }

  function refreshControls() {
    const busy = running();
    const canSend = model.get("can_send");
    composer.hidden = !canSend && !busy;
    input.hidden = send.hidden = !canSend;
    input.disabled = send.disabled = busy || awaiting;
    stop.hidden = !busy;
    stop.disabled = stopping || !model.get("session_id") || !model.get("project_id");
    stop.title = model.get("session_id") ? "" : "Available once the server has named the session";
    if (!busy && root.dataset.running === "true" && status.dataset.tone !== "error") setStatus("");
    root.dataset.running = String(busy);
    if (!busy) stopping = false;
  }

  function refreshHeader() {
    projectName.textContent = model.get("project_name") || model.get("project_id") || "";
    projectName.hidden = !projectName.textContent;
    sessionTitle.textContent = model.get("title") || "";
    sessionTitle.hidden = !sessionTitle.textContent;
  }

  const store = liveStore(model);

  function liveTurn(index) {
    const live = store.live;
    return live && live.turn === index ? live : null;
  }

  function addTurn(index, turn) {
    const live = turn.status === "running" ? liveTurn(index) : null;
    const view = live
      ? new TurnView({ user: live.user, status: "running", items: live.items, stats: {} }, live.stale)
      : new TurnView(turn, false);
    turns[index] = view;
    log.append(view.el);
  }

  function syncTurns() {
    const state = model.get("turns") || [];
    state.forEach((turn, index) => {
      if (turns[index]) turns[index].setTurn(turn, false);
      else addTurn(index, turn);
    });
    // Views beyond the state: a live turn whose state has not arrived yet is kept; the
    // rest are leftovers of a replaced conversation.
    let keep = state.length;
    if (turns.length === keep + 1 && turns[keep].status === "running") keep++;
    for (const view of turns.splice(keep)) {
      view.dispose();
      view.el.remove();
    }
    awaiting = false;
    refreshControls();
  }

  function onBegin(live) {
    if (!turns[live.turn]) addTurn(live.turn, { user: live.user, status: "running", items: [], stats: {} });
    awaiting = false;
    setStatus("");
    refreshControls();
  }

  // The kernel handles the message once it is idle; a widget restored from a saved
  // notebook has no kernel behind it at all, and the message goes nowhere.
  let sendTimer = 0;
  function sendMessage() {
    const text = input.value.trim();
    if (!text || input.disabled) return;
    model.send({ type: "send", text });
    input.value = "";
    autosize();
    awaiting = true;
    setStatus("Sending...");
    refreshControls();
    clearTimeout(sendTimer);
    sendTimer = setTimeout(() => {
      if (!awaiting) return;
      setStatus("No answer from the kernel yet: it replies once its running cell ends. " +
        "If the kernel was restarted, run the chat cell again.", "error");
      awaiting = false;
      refreshControls();
    }, 15000);
  }

  function autosize() {
    input.style.height = "auto";
    input.style.height = Math.min(input.scrollHeight + 2, 200) + "px";
  }

  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      event.stopPropagation();
      sendMessage();
    } else {
      event.stopPropagation(); // keep notebook shortcuts (a, b, dd, ...) out of the box
    }
  });
  input.addEventListener("input", autosize);
  send.addEventListener("click", sendMessage);
  stop.addEventListener("click", async () => {
    const projectId = model.get("project_id");
    const sessionId = model.get("session_id");
    if (!projectId || !sessionId || stopping) return;
    stopping = true;
    refreshControls();
    setStatus("Stopping...");
    try {
      await requestAbort(projectId, sessionId);
      setStatus("Stop requested: the copilot ends the turn at the next safe point.");
    } catch (error) {
      stopping = false;
      setStatus("Could not stop the turn (" + error.message + ").", "error");
      refreshControls();
    }
  });

  // A view taken out of the page (the output re-rendered at a turn's end leaves its old
  // view behind; notebook windowing detaches cells) drops its DOM and skips all work, and
  // rebuilds from the state and the live turn when it is shown again.
  let detached = false;
  function attached() {
    if (root.isConnected) {
      if (detached) {
        detached = false;
        store.views.add(listener);
        syncTurns();
        refreshHeader();
        return false; // rebuilt from the current state: the event is already in it
      }
      return true;
    }
    if (!detached) {
      detached = true;
      store.views.delete(listener);
      for (const view of turns.splice(0)) view.dispose();
      log.replaceChildren();
      // A view put back within the same frame never looks hidden to the observer, so
      // look once more after the frame (and after a timer, for pages that paint no frames).
      requestAnimationFrame(() => attached());
      setTimeout(() => attached(), 100);
    }
    return false;
  }
  const guarded = (fn) => (...args) => {
    if (attached()) fn(...args);
  };
  const visibility = new IntersectionObserver(() => attached());
  visibility.observe(root);

  const listener = {
    begin: guarded(onBegin),
    ops: guarded((index, ops) => turns[index] && turns[index].applyOps(ops)),
    stale: guarded((index) => turns[index] && turns[index].markStale()),
  };
  store.views.add(listener);
  const onTurns = guarded(syncTurns);
  const onControls = guarded(refreshControls);
  const onHeader = guarded(refreshHeader);
  model.on("change:turns", onTurns);
  model.on("change:can_send", onControls);
  model.on("change:session_id", onControls);
  model.on("change:project_id", onControls);
  model.on("change:project_name", onHeader);
  model.on("change:title", onHeader);

  refreshHeader();
  syncTurns();

  return () => {
    store.views.delete(listener);
    visibility.disconnect();
    model.off("change:turns", onTurns);
    model.off("change:can_send", onControls);
    model.off("change:session_id", onControls);
    model.off("change:project_id", onControls);
    model.off("change:project_name", onHeader);
    model.off("change:title", onHeader);
    clearTimeout(sendTimer);
    for (const turn of turns) turn.dispose();
  };
}

export default { initialize, render };

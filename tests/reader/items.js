// The outermost list items of Markdown documents as commonmark.js (the CommonMark reference
// implementation, 0.31.2) reads them: the independent reader tests/unit/test_journal_reader.py
// compares memfuse's bullets with. stdin: a JSON array of documents; stdout: for each, a JSON
// array of items {line, ordered, key, text} where `line` is the 1-based line the item starts
// on, `key` its section (the time of the last top-level ATX heading of level 2-6, "0000" after
// a level-1 heading or none), and `text` what a viewer shows of it (comments left out).
// Items between OpenClaw's dreaming markers (top-level HTML blocks) are left out.
"use strict";
const path = require("path");
const commonmark = require(path.join(__dirname, "..", "..", "tools", "node_modules", "commonmark"));

const TIME = /(?<![0-9])([01]?[0-9]|2[0-3]):([0-5][0-9])(?![0-9])/;
const MARKER = /^<!-- openclaw:dreaming:(light|rem|deep):(start|end) -->[ \t]*$/;
const COMMENT = /<!--(?:-?>|[\s\S]*?(?:-->|$))/g;

function key(heading) {
  let title = "";
  const walker = heading.walker();
  let ev;
  while ((ev = walker.next())) if (ev.entering && ev.node.literal) title += ev.node.literal;
  if (heading.level === 1) return "0000";
  const m = TIME.exec(title);
  return m ? m[1].padStart(2, "0") + m[2] : "0000";
}

function shown(item) {
  const parts = [];
  const walker = item.walker();
  let ev;
  while ((ev = walker.next())) {
    if (!ev.entering) continue;
    const node = ev.node;
    if (node.type === "html_inline") {
      if (!node.literal.startsWith("<!--")) parts.push(node.literal);
    } else if (node.type === "html_block") {
      parts.push(node.literal.replace(COMMENT, " "));
    } else if (node.literal) {
      parts.push(node.literal);
    }
    if (node.type === "softbreak" || node.type === "linebreak") parts.push(" ");
  }
  return parts.join(" ");
}

function dreaming(doc) {
  const spans = [];
  const open = {};
  for (let node = doc.firstChild; node; node = node.next) {
    if (node.type !== "html_block") continue;
    const m = MARKER.exec(node.literal.replace(/\n$/, ""));
    if (!m || node.sourcepos[0][1] !== 1) continue;
    const line = node.sourcepos[0][0];
    if (m[2] === "start") {
      if (!(m[1] in open)) open[m[1]] = line;
    } else if (m[1] in open) {
      spans.push([open[m[1]], line]);
      delete open[m[1]];
    }
  }
  return (line) => spans.some(([a, b]) => a <= line && line <= b);
}

function items(text) {
  const doc = new commonmark.Parser().parse(text);
  const lines = text.split(/\r\n|\r|\n/);
  const dreamt = dreaming(doc);
  const found = [];
  let section = "0000";
  const visit = (node) => {
    for (let child = node.firstChild; child; child = child.next) {
      const line = child.sourcepos[0][0];
      if (dreamt(line)) continue;
      if (child.type === "heading" && node.type === "document") {
        if (/^ {0,3}#{1,6}(?:[ \t]|$)/.test(lines[line - 1] || "")) section = key(child);
      } else if (child.type === "list") {
        for (let item = child.firstChild; item; item = item.next) {
          found.push({
            line: item.sourcepos[0][0],
            ordered: child.listType === "ordered",
            key: section,
            text: shown(item),
          });
        }
      } else if (child.type === "block_quote") {
        visit(child);
      }
    }
  };
  visit(doc);
  return found;
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  process.stdout.write(JSON.stringify(JSON.parse(input).map(items)));
});

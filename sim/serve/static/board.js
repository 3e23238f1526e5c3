// The table and the hand as SVG dominoes with pips; presentation only (no rules here:
// the server sends the legal moves, the open ends and the count).
"use strict";
const SVGNS = "http://www.w3.org/2000/svg";
const S = 24; // one half of a tile, in SVG units
const PIPS = { 0: [], 1: [[1, 1]], 2: [[0, 0], [2, 2]], 3: [[0, 0], [1, 1], [2, 2]],
  4: [[0, 0], [0, 2], [2, 0], [2, 2]], 5: [[0, 0], [0, 2], [1, 1], [2, 0], [2, 2]],
  6: [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [2, 2]] };

function el(name, attrs, parent) {
  const node = document.createElementNS(SVGNS, name);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

function halves(tile) { return tile.split("-").map(Number); }

// Pips of value v in the square half at (x, y); a vertical half has its pip rows turned.
function drawHalf(g, x, y, v, vertical) {
  for (const [r, c] of PIPS[v]) {
    const [row, col] = vertical ? [c, r] : [r, c];
    el("circle", { cx: x + S * (0.25 + 0.25 * col), cy: y + S * (0.25 + 0.25 * row), r: S / 11 }, g);
  }
}

// A tile with halves a then b: left to right, or top to bottom when vertical.
function drawTile(parent, x, y, a, b, vertical, cls) {
  const g = el("g", { class: "tile" + (cls ? " " + cls : "") }, parent);
  const w = vertical ? S : 2 * S, h = vertical ? 2 * S : S;
  el("rect", { class: "face", x, y, width: w, height: h, rx: 4 }, g);
  if (vertical) {
    el("line", { x1: x + 3, y1: y + S, x2: x + S - 3, y2: y + S }, g);
    drawHalf(g, x, y, a, true); drawHalf(g, x, y + S, b, true);
  } else {
    el("line", { x1: x + S, y1: y + 3, x2: x + S, y2: y + S - 3 }, g);
    drawHalf(g, x, y, a, false); drawHalf(g, x + S, y, b, false);
  }
  return g;
}

function label(svg, x, y, text, anchor) {
  const t = el("text", { x, y, class: "end-label", "text-anchor": anchor || "middle" }, svg);
  t.textContent = text;
}

const sameTile = (a, b) => { const [p, q] = halves(a), [r, s] = halves(b); return (p === r && q === s) || (p === s && q === r); };

// Words for a screen reader: the line, the Sniff's branches, the open ends and the count.
function boardLabel(board, count) {
  if (!board.opening) return "the table is empty";
  const ends = Object.entries(board.ends || {}).filter(([, v]) => v !== null && v !== undefined);
  const parts = [`line ${[...board.arms.L.slice().reverse(), board.opening, ...board.arms.R].join(", ")}`];
  if (board.sniff) parts.push(`the Sniff is ${board.sniff.arm === null ? "the opening" : "on " + board.sniff.arm}`);
  if (board.arms.U.length || board.arms.D.length) parts.push(`Sniff branches up ${board.arms.U.join(", ") || "none"}, down ${board.arms.D.join(", ") || "none"}`);
  parts.push(`open ends ${ends.map(([a, v]) => `${a} ${v}`).join(", ")}`);
  if (count !== undefined) parts.push(`count ${count}`);
  return "the table: " + parts.join("; ");
}

// The board: the line from the L end through the opening to the R end, doubles across
// it, the Sniff's U branch going up and D branch down; the viewBox fits what is drawn.
// ``marked`` names tiles placed since the person's last move (outlined).
function drawBoard(svg, board, marked, count) {
  svg.innerHTML = "";
  svg.setAttribute("aria-label", boardLabel(board, count));
  const recent = (tile) => (marked || []).some((m) => sameTile(m, tile));
  if (!board.opening) {
    label(svg, 0, 0, "the table is empty"); svg.setAttribute("viewBox", "-200 -60 400 120");
    svg.style.minWidth = "";
    return;
  }
  const sniff = board.sniff, ends = board.ends || {};
  const isSniff = (arm, i) => sniff && sniff.arm === arm && sniff.index === i;
  const cls = (heavy, tile) => [heavy ? "sniff" : "", recent(tile) ? "recent" : ""].join(" ").trim();
  const items = [];
  board.arms.L.slice().reverse().forEach((tile, k) => {
    const [inner, outer] = halves(tile);
    items.push([outer, inner, isSniff("L", board.arms.L.length - 1 - k), tile]);
  });
  const [f, s] = halves(board.opening);
  items.push([f, s, isSniff(null, 0), board.opening]);
  board.arms.R.forEach((tile, i) => { const [inner, outer] = halves(tile); items.push([inner, outer, isSniff("R", i), tile]); });
  let x = 0, sniffX = null;
  const gap = 3;
  const endText = (arm) => (ends[arm] === null || ends[arm] === undefined) ? null : `${arm}=${ends[arm]}`;
  if (endText("L")) label(svg, -6, 5, endText("L"), "end");
  for (const [a, b, heavy, tile] of items) {
    if (a === b) {
      drawTile(svg, x, -S, a, b, true, cls(heavy, tile));
      if (heavy) sniffX = x + S / 2;
      x += S + gap;
    } else {
      drawTile(svg, x, -S / 2, a, b, false, cls(false, tile));
      x += 2 * S + gap;
    }
  }
  if (endText("R")) label(svg, x + 4, 5, endText("R"), "start");
  let top = -S, bottom = S;
  if (sniffX !== null) {
    for (const [arm, step] of [["U", -1], ["D", 1]]) {
      let y = step < 0 ? -S - gap : S + gap;
      for (const tile of board.arms[arm]) {
        const [inner, outer] = halves(tile);
        if (inner === outer) {
          const yy = step < 0 ? y - S : y;
          drawTile(svg, sniffX - S, yy, inner, outer, false, cls(false, tile));
          y += step * (S + gap);
        } else {
          const yy = step < 0 ? y - 2 * S : y;
          const [p, q] = step < 0 ? [outer, inner] : [inner, outer];
          drawTile(svg, sniffX - S / 2, yy, p, q, true, cls(false, tile));
          y += step * (2 * S + gap);
        }
      }
      if (endText(arm)) label(svg, sniffX, step < 0 ? y - 6 : y + 16, endText(arm));
      top = Math.min(top, y - 24); bottom = Math.max(bottom, y + 24);
    }
  }
  const left = -70, right = x + 70;
  const width = Math.max(right - left, 300), height = Math.max(bottom - top, 140);
  const cx = (left + right) / 2, cy = (top + bottom) / 2;
  svg.setAttribute("viewBox", `${cx - width / 2} ${cy - height / 2} ${width} ${height}`);
  // A long line keeps readable tiles on a phone: the board scrolls sideways instead.
  svg.style.minWidth = `${Math.round(width * 0.6)}px`;
}

// A small upright domino as an SVG element (for buttons and the log).
function tileSvg(tile, size) {
  const [a, b] = halves(tile);
  const svg = el("svg", { viewBox: `-2 -2 ${S + 4} ${2 * S + 4}`, width: size / 2, height: size, "aria-hidden": "true", focusable: "false" });
  drawTile(svg, 0, 0, a, b, true, "");
  return svg;
}

// A tile as a button: keyboard and screen readers reach it; onClick(tile, button).
function tileButton(tile, enabled, what, onClick) {
  const button = document.createElement("button");
  button.type = "button"; button.className = "tile-button" + (enabled ? " legal" : "");
  button.dataset.tile = tile;
  button.setAttribute("aria-label", `${tile}${what ? ", " + what : ""}`);
  button.appendChild(tileSvg(tile, 64));
  if (enabled) button.addEventListener("click", () => onClick(tile, button));
  else button.setAttribute("aria-disabled", "true");
  return button;
}

// The person's hand, one button per tile; the legal ones can be pressed.
function drawHand(box, hand, legal, onClick) {
  box.innerHTML = "";
  for (const tile of hand) {
    const ok = legal.has(tile);
    box.appendChild(tileButton(tile, ok, ok ? "playable" : "cannot be played now", onClick));
  }
}

// A log line: its text and the tiles it names, drawn small.
function lineItem(line) {
  const li = document.createElement("li");
  li.className = "line " + line.kind;
  const text = document.createElement("span");
  text.textContent = line.text;
  li.appendChild(text);
  for (const tile of line.tiles || []) li.appendChild(tileSvg(tile, 28));
  return li;
}

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

// The board: the line from the L end through the opening to the R end, doubles across
// it, the Sniff's U branch going up and D branch down; the viewBox fits what is drawn.
function drawBoard(svg, board) {
  svg.innerHTML = "";
  if (!board.opening) {
    label(svg, 0, 0, "the table is empty"); svg.setAttribute("viewBox", "-200 -60 400 120");
    return;
  }
  const sniff = board.sniff, ends = board.ends || {};
  const isSniff = (arm, i) => sniff && sniff.arm === arm && sniff.index === i;
  const items = [];
  board.arms.L.slice().reverse().forEach((tile, k) => {
    const [inner, outer] = halves(tile);
    items.push([outer, inner, isSniff("L", board.arms.L.length - 1 - k)]);
  });
  const [f, s] = halves(board.opening);
  items.push([f, s, isSniff(null, 0)]);
  board.arms.R.forEach((tile, i) => { const [inner, outer] = halves(tile); items.push([inner, outer, isSniff("R", i)]); });
  let x = 0, sniffX = null;
  const gap = 3;
  const endText = (arm) => (ends[arm] === null || ends[arm] === undefined) ? null : `${arm}=${ends[arm]}`;
  if (endText("L")) label(svg, -6, 5, endText("L"), "end");
  for (const [a, b, heavy] of items) {
    if (a === b) {
      drawTile(svg, x, -S, a, b, true, heavy ? "sniff" : "");
      if (heavy) sniffX = x + S / 2;
      x += S + gap;
    } else {
      drawTile(svg, x, -S / 2, a, b, false, "");
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
          drawTile(svg, sniffX - S, yy, inner, outer, false, "");
          y += step * (S + gap);
        } else {
          const yy = step < 0 ? y - 2 * S : y;
          const [p, q] = step < 0 ? [outer, inner] : [inner, outer];
          drawTile(svg, sniffX - S / 2, yy, p, q, true, "");
          y += step * (2 * S + gap);
        }
      }
      if (endText(arm)) label(svg, sniffX, step < 0 ? y - 6 : y + 16, endText(arm));
      top = Math.min(top, y - 24); bottom = Math.max(bottom, y + 24);
    }
  }
  const left = -70, right = x + 70;
  const width = Math.max(right - left, 400), height = Math.max(bottom - top, 160);
  const cx = (left + right) / 2, cy = (top + bottom) / 2;
  svg.setAttribute("viewBox", `${cx - width / 2} ${cy - height / 2} ${width} ${height}`);
}

// The person's hand, one upright tile each; onClick(tile) for the legal ones.
function drawHand(svg, hand, legal, onClick) {
  svg.innerHTML = "";
  hand.forEach((tile, i) => {
    const [a, b] = halves(tile);
    const g = drawTile(svg, i * (S + 12), 0, a, b, true, legal.has(tile) ? "legal" : "");
    g.dataset.tile = tile;
    if (legal.has(tile)) g.addEventListener("click", () => onClick(tile, g));
  });
  const width = Math.max(hand.length * (S + 12), 300);
  svg.setAttribute("viewBox", `-6 -6 ${width + 12} ${2 * S + 12}`);
}

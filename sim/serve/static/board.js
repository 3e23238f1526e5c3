// The table and the hand as SVG dominoes with pips; presentation only (no rules here: the
// server sends the legal moves, the open ends and the count).
//
// The board is drawn at one SVG unit per CSS pixel, as wide as its box, and as tall as the
// layout needs: the line never scrolls sideways, it turns its corners as on a real table.
// The Sniff (or, before there is one, the opening tile) sits in the middle; the line's R
// side runs right and then snakes down in the right half, its L side runs left and snakes
// up in the left half (the same path turned half a turn), and the Sniff's U and D branches
// run straight up and down between the two. A corner is a tile laid across the end of a
// row, under (or over) its last tile's outer half; the next row starts beside the corner's
// other half. Every double is laid crosswise to its line. Each open end has a slot where
// its next tile would go, labelled with its value; when a tile fits two ends, the slots of
// those ends are buttons (the end is chosen by clicking it on the board).
"use strict";
const SVGNS = "http://www.w3.org/2000/svg";
const PIPS = { 0: [], 1: [[1, 1]], 2: [[0, 0], [2, 2]], 3: [[0, 0], [1, 1], [2, 2]],
  4: [[0, 0], [0, 2], [2, 0], [2, 2]], 5: [[0, 0], [0, 2], [1, 1], [2, 0], [2, 2]],
  6: [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [2, 2]] };
const GAP = 3;  // px between two tiles
const ROTATE = { E: "W", W: "E", S: "N", N: "S" };

function el(name, attrs, parent) {
  const node = document.createElementNS(SVGNS, name);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

function halves(tile) { return tile.split("-").map(Number); }
const sameTile = (a, b) => { const [p, q] = halves(a), [r, s] = halves(b); return (p === r && q === s) || (p === s && q === r); };

// Pips of value v in the square half of side h at (x, y).
function drawHalf(g, x, y, v, h) {
  for (const [r, c] of PIPS[v]) el("circle", { cx: x + h * (0.25 + 0.25 * c), cy: y + h * (0.25 + 0.25 * r), r: h / 9 }, g);
}

// A tile in the rectangle (x, y, w, h) with halves a then b (left to right, or top to bottom).
function drawTile(parent, x, y, w, h, a, b, cls) {
  const g = el("g", { class: "tile" + (cls ? " " + cls : "") }, parent);
  const side = Math.min(w, h);
  el("rect", { class: "face", x, y, width: w, height: h, rx: side / 6 }, g);
  if (w >= h) {
    el("line", { x1: x + side, y1: y + 3, x2: x + side, y2: y + h - 3 }, g);
    drawHalf(g, x, y, a, side); drawHalf(g, x + side, y, b, side);
  } else {
    el("line", { x1: x + 3, y1: y + side, x2: x + w - 3, y2: y + side }, g);
    drawHalf(g, x, y, a, side); drawHalf(g, x, y + side, b, side);
  }
  return g;
}

// The halves of a placed tile in drawing order (left-right or top-bottom), from its
// direction of travel: the inner half touches the tile before it.
function ordered(p) {
  if (p.inner === p.outer) return [p.inner, p.outer];
  return p.dir === "E" || p.dir === "S" ? [p.inner, p.outer] : [p.outer, p.inner];
}

// One side of the line from the anchor: right, then down a corner and back left, and so on,
// between xMin and xMax (local units, the anchor's centre at 0, y down). place(item, keep)
// answers the rectangle the item takes; keep false only asks where it would go.
function snake(u, xStart, xMin, xMax) {
  let dir = 1, cy = 0, hx = xStart, last = null;
  const out = [];
  function place(item, keep) {
    const len = item.double ? 2 * u : 4 * u, wid = item.double ? 4 * u : 2 * u;
    const fits = dir > 0 ? hx + GAP + len <= xMax : hx - GAP - len >= xMin;
    let rect;
    if (!fits && last) {  // the corner: across the row's end, under its last tile's outer half
      const x = dir > 0 ? last.x + last.w - 2 * u : last.x, y = last.y + last.h + GAP;
      rect = { x, y, w: 2 * u, h: 4 * u, dir: "S", corner: true };
      if (keep) { cy = y + 3 * u; hx = dir > 0 ? x : x + 2 * u; dir = -dir; last = null; }
    } else {
      const x = dir > 0 ? hx + GAP : hx - GAP - len;
      rect = { x, y: cy - wid / 2, w: len, h: wid, dir: dir > 0 ? "E" : "W" };
      if (keep) { hx = dir > 0 ? x + len : x; last = rect; }
    }
    if (keep) out.push({ ...item, ...rect });
    return rect;
  }
  return { place, out };
}

// A Sniff branch: straight down from y0, doubles across it.
function column(u, y0) {
  let y = y0;
  const out = [];
  function place(item, keep) {
    const rect = item.double ? { x: -2 * u, y: y + GAP, w: 4 * u, h: 2 * u, dir: "S" } : { x: -u, y: y + GAP, w: 2 * u, h: 4 * u, dir: "S" };
    if (keep) { y = rect.y + rect.h; out.push({ ...item, ...rect }); }
    return rect;
  }
  return { place, out };
}

// Half a turn about the anchor: the L side and the U branch are drawn as the R side and
// the D branch, turned.
function turned(p) { return { ...p, x: -p.x - p.w, y: -p.y - p.h, dir: ROTATE[p.dir] }; }

// The line from the L end to the R end, each tile as (left half, right half), and the
// index of the anchor (the Sniff when it lies in the line, else the opening).
function lineOf(board) {
  const L = board.arms.L, R = board.arms.R, seq = [];
  L.slice().reverse().forEach((tile) => { const [inner, outer] = halves(tile); seq.push({ a: outer, b: inner, tile }); });
  const [f, s] = halves(board.opening);
  seq.push({ a: f, b: s, tile: board.opening });
  R.forEach((tile) => { const [inner, outer] = halves(tile); seq.push({ a: inner, b: outer, tile }); });
  const sniff = board.sniff;
  let anchor = L.length;
  if (sniff && sniff.arm === "L") anchor = L.length - 1 - sniff.index;
  if (sniff && sniff.arm === "R") anchor = L.length + 1 + sniff.index;
  return { seq, anchor };
}

// Every tile and every open end's slot, in local units (the anchor's centre at 0, 0).
function layout(board, u, half) {
  const { seq, anchor } = lineOf(board);
  const centre = seq[anchor], double = centre.a === centre.b;
  const placed = [{ ...centre, inner: centre.a, outer: centre.b, double, sniff: Boolean(board.sniff), dir: "E",
    ...(double ? { x: -u, y: -2 * u, w: 2 * u, h: 4 * u } : { x: -2 * u, y: -u, w: 4 * u, h: 2 * u }) }];
  const start = double ? u : 2 * u, xMin = 2 * u + GAP, xMax = half - 4;
  const item = (t, inner, outer) => ({ tile: t.tile, inner, outer, double: inner === outer });
  const right = snake(u, start, xMin, xMax), left = snake(u, start, xMin, xMax);
  seq.slice(anchor + 1).forEach((t) => right.place(item(t, t.a, t.b), true));
  seq.slice(0, anchor).reverse().forEach((t) => left.place(item(t, t.b, t.a), true));
  const slots = { R: right.place({ double: false }, false), L: turned(left.place({ double: false }, false)) };
  placed.push(...right.out, ...left.out.map(turned));
  if (double && board.sniff) {
    const down = column(u, 2 * u), up = column(u, 2 * u);
    for (const [arm, branch] of [["D", down], ["U", up]]) {
      for (const tile of board.arms[arm]) { const [inner, outer] = halves(tile); branch.place({ tile, inner, outer, double: inner === outer }, true); }
      slots[arm] = branch.place({ double: false }, false);
    }
    placed.push(...down.out, ...up.out.map(turned));
    slots.U = turned(slots.U);
  }
  return { placed, slots };
}

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

// The tile length for a board this wide: at least 44 px (a phone), at most 60.
function unitFor(width) { return Math.max(11, Math.min(15, Math.floor(width / 36))); }

// An open end's slot: its label, and (when it is one of the ends offered) a button.
function drawSlot(svg, arm, value, r, target) {
  const g = el("g", { class: "slot" + (target ? " target" : ""), "data-end": arm }, svg);
  el("rect", { x: r.x, y: r.y, width: r.w, height: r.h, rx: 4 }, g);
  const t = el("text", { x: r.x + r.w / 2, y: r.y + r.h / 2 + 5, class: "end-label", "text-anchor": "middle" }, g);
  t.textContent = target ? target.label : `${arm}=${value}`;
  if (!target) return;
  g.setAttribute("role", "button"); g.setAttribute("tabindex", "0");
  g.setAttribute("aria-label", target.aria);
  g.addEventListener("click", target.choose);
  g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); target.choose(); } });
}

// The board. ``marked`` names tiles to outline (placed since your last move); ``targets``
// maps an end to {label, aria, choose} when a chosen tile fits more than one end.
function drawBoard(svg, board, marked, count, targets) {
  svg._board = [board, marked, count, targets];
  svg.innerHTML = "";
  svg.setAttribute("aria-label", boardLabel(board, count));
  const width = Math.round((svg.parentElement && svg.parentElement.clientWidth) || svg.clientWidth || 800);
  if (!board.opening) {
    svg.setAttribute("viewBox", `0 0 ${width} 120`); svg.style.height = "120px";
    const t = el("text", { x: width / 2, y: 64, class: "end-label", "text-anchor": "middle" }, svg);
    t.textContent = "the table is empty";
    return;
  }
  const u = unitFor(width), { placed, slots } = layout(board, u, width / 2);
  const recent = (tile) => (marked || []).some((m) => sameTile(m, tile));
  const g = el("g", {}, svg);
  for (const p of placed) {
    const [a, b] = ordered(p);
    const cls = [p.sniff && p === placed[0] ? "sniff" : "", recent(p.tile) ? "recent" : ""].join(" ").trim();
    drawTile(g, p.x, p.y, p.w, p.h, a, b, cls).dataset.tile = p.tile;
  }
  for (const [arm, r] of Object.entries(slots)) {
    const value = (board.ends || {})[arm];
    if (value === null || value === undefined) continue;
    drawSlot(g, arm, value, r, targets && targets[arm]);
  }
  const boxes = [...placed, ...Object.values(slots)];
  const top = Math.min(...boxes.map((p) => p.y)) - 8, bottom = Math.max(...boxes.map((p) => p.y + p.h)) + 8;
  const height = Math.max(bottom - top, 4 * u + 40);
  const y0 = (top + bottom) / 2 - height / 2;
  g.setAttribute("transform", `translate(${width / 2} 0)`);
  svg.setAttribute("viewBox", `0 ${y0} ${width} ${height}`);
  svg.style.height = `${height}px`;
}

// Boards are drawn for their box's width: drawn again when it changes.
function redrawBoards() {
  for (const svg of document.querySelectorAll("svg.board")) if (svg._board && svg.parentElement.clientWidth) drawBoard(svg, ...svg._board);
}
let resizing = null;
window.addEventListener("resize", () => { clearTimeout(resizing); resizing = setTimeout(redrawBoards, 100); });

// A small upright domino as an SVG element (for buttons and the log).
function tileSvg(tile, size) {
  const [a, b] = halves(tile);
  const svg = el("svg", { viewBox: "-2 -2 28 52", width: size / 2, height: size, "aria-hidden": "true", focusable: "false" });
  drawTile(svg, 0, 0, 24, 48, a, b, "");
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
function lineItem(line, tag) {
  const li = document.createElement(tag || "li");
  li.className = "line " + line.kind;
  const text = document.createElement("span");
  text.textContent = line.text;
  li.appendChild(text);
  for (const tile of line.tiles || []) li.appendChild(tileSvg(tile, 28));
  return li;
}

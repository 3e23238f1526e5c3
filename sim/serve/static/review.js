// Review: the move list steps the whole table back to any event (board, ends, count,
// scores, tile counts, your hand, the round's log, the score sheet and a settlement, all
// of that moment); the analysis of a finished game, its rows and its chart of the win
// chance jump the table to a decision; a position shown goes to the set-up board.
"use strict";

async function loadMoves() {
  if (!game.view) return null;
  if (!game.history) {
    game.history = (await api("GET", `/api/games/${game.view.session}/history`, undefined, "reading the move list")).frames;
    const list = $("moves"); list.innerHTML = "";
    game.history.forEach((frame, i) => {
      const li = lineItem(frame.line);
      li.dataset.index = i;
      li.addEventListener("click", () => reviewAt(i).catch(fail));
      list.appendChild(li);
    });
    $("moves-load").hidden = true;
  }
  return game.history;
}

// The table at frame ``index`` of the move list, whole.
function reviewState(frames, index, note) {
  const frame = frames[index];
  let start = index;
  while (start > 0 && frames[start].kind !== "round_start") start--;
  const state = frameState(frame, { log: [], sheet: [] });
  state.log = frames.slice(start, index + 1).map((f) => f.line);
  state.sheet = frames.slice(0, index + 1).filter((f) => f.sheet_row).map((f) => f.sheet_row);
  state.turn = frame.turn;
  state.review = true;
  state.status = `reviewing event ${index + 1} of ${frames.length}: ${frame.line.text}${note ? " · " + note : ""}`;
  return state;
}

async function reviewAt(index, note) {
  const frames = await loadMoves();
  if (!frames || game.busy) return;
  if (index >= frames.length - 1 || (index < 0 && game.review === null)) return live();
  game.review = Math.max(0, index);
  game.token++;  // a review stops any answer still being shown
  drawState(game.view, reviewState(frames, game.review, note));
  for (const b of $("hand").querySelectorAll("button")) b.disabled = true;
  $("reviewing").hidden = $("hand").hidden = false;
  $("actions").hidden = $("result").hidden = true;
  $("hint").disabled = true;
  for (const li of $("moves").children) li.classList.toggle("current", Number(li.dataset.index) === game.review);
  const list = $("moves"), current = list.querySelector(".current");
  if (current) list.scrollTop = current.offsetTop - list.offsetTop - list.clientHeight / 2;
  const board = $("board").getBoundingClientRect();
  if (board.top < 0 || board.top > innerHeight / 2) $("seats").scrollIntoView({ block: "start" });
}

function live() {
  if (!game.view) return;
  $("reviewing").hidden = true; $("actions").hidden = false;
  for (const li of $("moves").querySelectorAll(".current")) li.classList.remove("current");
  drawGame(); lock(false);
}

function step(delta) {
  if (!game.view || game.busy) return;
  const at = game.review === null ? (game.history ? game.history.length - 1 : game.view.events - 1) : game.review;
  reviewAt(at + delta).catch(fail);
}

async function toSetup() {
  try {
    const frames = await loadMoves();
    const index = game.review === null ? frames.length - 1 : game.review;
    const position = await api("POST", `/api/games/${game.view.session}/position`, { event: index }, "writing the position");
    openSetup(position.text);
  } catch (error) { fail(error); }
}

// ---------------------------------------------------------------- the analysis
const CHART = { h: 262, left: 44, right: 16, top: 14, bottom: 74 };

// The win chance over the game: the move you played and the search's best, per decision,
// the graded ones marked ?!, ? or ?? (a click on a mark shows the table there).
function winChart(decisions) {
  // As wide as its box, one unit a pixel, so that its words stay readable on a phone.
  const c = { ...CHART, w: Math.max(340, Math.min(720, $("analysis").clientWidth || 640)) };
  const n = decisions.length, plotW = c.w - c.left - c.right, plotH = c.h - c.top - c.bottom;
  const x = (i) => c.left + (n === 1 ? plotW / 2 : (i * plotW) / (n - 1)), y = (p) => c.top + (1 - p) * plotH;
  const svg = el("svg", { viewBox: `0 0 ${c.w} ${c.h}`, id: "win-chart", role: "img" });
  const costly = decisions.filter((d) => d.mark).length;
  svg.setAttribute("aria-label", `your side's chance to win at each of your ${n} decisions: from ${(100 * decisions[0].win_played).toFixed(0)}% to ${(100 * decisions[n - 1].win_played).toFixed(0)}% with the moves you played; ${costly} costly move${costly === 1 ? "" : "s"} marked`);
  for (const p of [0, 0.5, 1]) {
    el("line", { x1: c.left, x2: c.w - c.right, y1: y(p), y2: y(p), class: "grid" }, svg);
    el("text", { x: c.left - 6, y: y(p) + 4, "text-anchor": "end", class: "axis" }, svg).textContent = `${100 * p}%`;
  }
  el("text", { x: c.left, y: c.h - 48, class: "axis" }, svg).textContent = "your decisions, in order →";
  const line = (key, cls) => el("polyline", { points: decisions.map((d, i) => `${x(i)},${y(d[key])}`).join(" "), class: cls }, svg);
  line("win_best", "best"); line("win_played", "played");
  [["played", "the moves you played"], ["best", "the search's best"]].forEach(([cls, text], k) => {
    const y0 = c.h - 30 + 18 * k;
    el("line", { x1: c.left, x2: c.left + 24, y1: y0 - 4, y2: y0 - 4, class: "key-line " + cls }, svg);
    el("text", { x: c.left + 30, y: y0, class: "key-text" }, svg).textContent = text;
  });
  decisions.forEach((d, i) => {
    if (!d.mark) return;
    const g = el("g", { class: "mark", "data-event": d.event }, svg);
    el("circle", { cx: x(i), cy: y(d.win_played), r: 6 }, g);
    el("text", { x: x(i), y: y(d.win_played) + (i % 2 ? 20 : -10), "text-anchor": "middle" }, g).textContent = d.mark;
    g.addEventListener("click", () => jumpTo(d).catch(fail));
  });
  return svg;
}

function jumpTo(d) {
  return reviewAt(d.event - 1, `your decision ${d.round}.${d.turn}: you played ${d.played}, the search's best ${d.best}`);
}

// The game's accuracy and its costly moves: sniff analyze's own figures for the game's
// trace, each graded move a button that shows the table at that decision.
function accuracyHtml(a) {
  const n = a.decisions.length, g = a.grades;
  if (!n) return `<p id="accuracy">No decision of yours had more than one legal move.</p>`;
  const count = (k, one, many) => `${k} ${k === 1 ? one : many}`;
  const points = a.thresholds.map((t) => `${+(100 * t).toFixed(2)}`).join(", ");
  const costly = a.decisions.map((d, i) => [d, i]).filter(([d]) => d.grade).map(([d, i]) =>
    `<li><button type="button" data-row="${i}" data-event="${d.event}">${d.round}.${d.turn} ${d.grade}: you played ${d.played}, the best was ${d.best} (${(100 * d.loss_full).toFixed(1)} points of win chance given up)</button></li>`);
  return `<p id="accuracy"><strong>Accuracy ${(100 * a.accuracy).toFixed(0)}%</strong> over your ${count(n, "decision", "decisions")}: ` +
    `${count(g.inaccuracy, "inaccuracy", "inaccuracies")}, ${count(g.mistake, "mistake", "mistakes")}, ${count(g.blunder, "blunder", "blunders")} ` +
    `(sniff analyze's figures for this game: a move is graded at ${points} points of win chance given up, interval above 0)</p>` +
    (costly.length ? `<h3 id="mistakes-title">Your costly moves</h3><ol id="mistakes" aria-labelledby="mistakes-title">${costly.join("")}</ol>` : "");
}

const inPoints = (p) => (100 * p).toFixed(1);  // a share as points of percent

async function analyse() {
  if ($("analyse").disabled) return;
  $("analysis").textContent = "";
  $("analyse").disabled = true;  // one analysis at a time; the progress line says it works
  try {
    const a = await api("POST", `/api/games/${game.view.session}/analysis`, {}, "analysing each of your decisions as sniff analyze does (the first analysis on this machine compiles its search once, about half a minute)");
    await loadMoves();
    const rows = a.decisions.map((d) => `<tr class="${d.mark ? "costly" : ""}" tabindex="0" data-event="${d.event}"><th scope="row">${d.round}.${d.turn}</th><td>${d.played} ${d.mark}</td><td>${inPoints(d.win_played)}%</td><td>${d.best}</td><td>${inPoints(d.win_best)}%</td><td>${inPoints(d.loss)}</td><td>${inPoints(d.loss_full)} [${inPoints(d.loss_low)}, ${inPoints(d.loss_high)}]</td></tr>`);
    const symbols = Object.entries(a.symbols).map(([grade, symbol], k) => `${symbol} ${grade} (≥ ${+(100 * a.thresholds[k]).toFixed(2)} points)`).join(", ");
    $("analysis").innerHTML = `<h2>Your decisions</h2>${accuracyHtml(a)}<p class="legend">chance to win: <span class="key played">the moves you played</span> · <span class="key best">the search's best</span> · a circle marks a graded move: ${symbols} of win chance given up, interval above 0; click a mark or a row to see the table there</p>` +
      `<p id="analysis-source">As <code>${a.command}</code> on the downloaded trace: ${a.budget} play-outs per move, twice (policy ${a.policy}, endgames ${a.endgame})</p>` +
      `<div class="scroll" tabindex="0" role="region" aria-label="your decisions analysed"><table id="analysis-table"><caption>Each of your decisions</caption><thead><tr><th scope="col">round.turn</th><th scope="col">played</th><th scope="col">win</th><th scope="col">best</th><th scope="col">its win</th><th scope="col" title="win chance given up against the best move, cross-fitted (the best picked on half the deals, measured on the other half): sniff analyze's headline, below 0 where the move played did better on the other half">loss (points)</th><th scope="col" title="the best move's win chance minus yours on all the deals, with its paired 95% interval: what the grades read">on all deals [95%]</th></tr></thead><tbody>${rows.join("")}</tbody></table></div>`;
    if (a.decisions.length) $("analysis").insertBefore(winChart(a.decisions), $("analysis-source"));
    $("analysis").querySelectorAll("#mistakes button").forEach((b) => {
      b.addEventListener("click", () => jumpTo(a.decisions[Number(b.dataset.row)]).catch(fail));
    });
    $("analysis").querySelectorAll("tbody tr").forEach((tr, i) => {
      const go = () => jumpTo(a.decisions[i]).catch(fail);
      tr.addEventListener("click", go);
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); go(); } });
    });
  } catch (error) { fail(error); } finally { $("analyse").disabled = false; }
}

$("to-setup").addEventListener("click", toSetup);
$("moves-load").addEventListener("click", () => loadMoves().catch(fail));
$("analyse").addEventListener("click", analyse);
$("moves-first").addEventListener("click", () => reviewAt(0).catch(fail));
$("moves-prev").addEventListener("click", () => step(-1));
$("moves-next").addEventListener("click", () => step(1));
$("moves-live").addEventListener("click", live);
$("dock-prev").addEventListener("click", () => step(-1));
$("dock-next").addEventListener("click", () => step(1));
$("dock-live").addEventListener("click", live);
document.addEventListener("keydown", (e) => {
  if ($("mode-game").hidden || !game.view || e.target.closest("input, select, textarea")) return;
  if (e.key === "ArrowLeft") { e.preventDefault(); step(-1); }
  else if (e.key === "ArrowRight") { e.preventDefault(); step(1); }
  else if (e.key === "Home" && e.target.closest("#moves")) { e.preventDefault(); reviewAt(0).catch(fail); }
  else if (e.key === "End" || e.key === "Escape") { if (game.review !== null) { e.preventDefault(); live(); } }
});

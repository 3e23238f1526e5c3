// One moment of a game drawn whole: the board, the seats (tile counts, whose turn), the
// open ends, count and scores, your hand, the round's log, the score sheet, a settlement
// and the status line, all from one state (the live view, an answer's frame, or a frame of
// the move list), so no part of the page shows another moment. Also the hint's table.
"use strict";

function liveStatus(view) {
  const status = { move: view.forced ? "you drew a tile that fits: choose its end" : "your move: choose a lit tile",
    settled: `round ${view.round} settled: see the hands below, then Next round`, over: view.banner };
  return status[view.phase];
}

function liveState(view) {
  const turn = view.seats.find((s) => s.turn);
  return { board: view.board, marked: view.marked, count: view.count, sizes: view.sizes, boneyard: view.boneyard,
    scores: view.scores, hand: view.hand, round: view.round, turn: turn ? turn.seat : null, mover: null, thinking: false,
    log: view.log, sheet: view.sheet, settlement: view.settlement, status: liveStatus(view), index: view.events - 1 };
}

const DID = { play: "played", draw: "drew", pass: "passed" };

// The seats around the table: the others above the board, you beside your hand.
function drawSeats(view, state) {
  const box = $("seats"); box.innerHTML = ""; $("me").innerHTML = "";
  for (const seat of view.seats) {
    const div = document.createElement("div");
    const where = (seat.seat - view.seat + view.players) % view.players;
    const turn = state.turn === seat.seat, moved = state.mover === seat.seat && DID[state.kind];
    div.className = `seat at-${view.players}-${where}` + (turn ? " turn" : "") + (moved ? " moved" : "") + (seat.you ? " you" : "");
    const n = state.sizes[seat.seat];
    div.innerHTML = `<b></b><span class="strategy"></span><span class="team"></span><span class="backs" aria-hidden="true"></span> <span class="count"></span>`;
    div.querySelector("b").textContent = seat.you ? "You" : `Seat ${seat.seat}`;
    if (!seat.you) div.querySelector(".strategy").textContent = ` (${seat.strategy})`;
    if (view.players === 4) div.querySelector(".team").textContent = ` · ${view.teams[seat.team]}`;
    if (!seat.you) div.querySelector(".backs").textContent = "▮".repeat(Math.min(n, 12));
    const doing = turn ? (seat.you && !state.review ? " · your move" : state.thinking ? " · thinking…" : " · to play") : moved ? ` · ${moved}` : "";
    div.querySelector(".count").textContent = `${n} tile${n === 1 ? "" : "s"}${doing}`;
    (seat.you ? $("me") : box).appendChild(div);
  }
  const yard = document.createElement("div");
  yard.className = "seat boneyard"; yard.textContent = `boneyard ${state.boneyard}`;
  box.appendChild(yard);
}

function drawEnds(view, state) {
  const ends = Object.entries(state.board.ends || {}).filter(([, v]) => v !== null && v !== undefined);
  const scores = state.scores.map((v, t) => `${view.teams[t]}${t === view.my_team ? " (you)" : ""} ${v}`).join(", ");
  const where = `round ${state.round} · target ${view.target} · `;
  $("ends").textContent = where + (ends.length ? `open ends ${ends.map(([a, v]) => `${a}=${v}`).join(" ")} · count ${state.count} · ` : "") + `scores ${scores}`;
}

// The state drawn whole; ``live``: the game as it stands, your legal tiles lit.
function drawState(view, state, live) {
  drawBoard($("board"), state.board, state.marked, state.count);
  drawSeats(view, state);
  drawEnds(view, state);
  const legal = live && view.phase === "move" ? new Set(view.options.map((o) => o.tile)) : new Set();
  drawHand($("hand"), state.hand, legal, choose);
  $("prompt").innerHTML = "";
  const log = $("log"); log.innerHTML = "";
  for (const line of state.log) log.appendChild(lineItem(line));
  log.scrollTop = log.scrollHeight;
  drawSheet(view, state.sheet, state.scores);
  drawSettlement(view, state.settlement);
  say(state.status);
  $("status").dataset.phase = live ? view.phase : game.review !== null ? "review" : "showing";
  window.sniffDrawn.push({ index: state.index, live: Boolean(live), review: game.review !== null, hand: $("hand").children.length,
    me: state.sizes[view.seat], meText: $("me").textContent, status: $("status").textContent, ends: $("ends").textContent,
    tiles: $("board").querySelectorAll("g.tile").length, turn: state.turn, thinking: state.thinking });
}

function drawSheet(view, rows, scores) {
  const head = `<thead><tr><th scope="col">round</th>${view.teams.map((t, i) => `<th scope="col">${t}${i === view.my_team ? " (you)" : ""}</th>`).join("")}</tr></thead>`;
  const cell = (r, t) => `<td><span class="gain">+${r.gained[t]}</span>${r.penalties[t] ? ` <span class="pen">−${r.penalties[t]}</span>` : ""} = <b>${r.scores[t]}</b></td>`;
  const body = rows.map((r) => `<tr><th scope="row">${r.round}</th>${r.scores.map((_, t) => cell(r, t)).join("")}</tr>`);
  $("sheet").innerHTML = head + `<tbody>${body.join("")}</tbody><tfoot><tr><th scope="row">now</th>${scores.map((v) => `<td><b>${v}</b></td>`).join("")}</tr></tfoot>`;
}

function drawSettlement(view, s) {
  const box = $("settlement"); box.innerHTML = "";
  if (!s) return;
  const name = (seat) => seat === view.seat ? "you" : "seat " + seat;
  const who = s.reason === "target" ? `${name(s.winner_seat)} reached the target; the hands as they stand`
    : s.winner_seat === null ? "blocked: no one went out" : `${name(s.winner_seat)} went out`;
  const table = document.createElement("table");
  table.innerHTML = `<caption>Round ${s.round} settled (${who})</caption><thead><tr><th scope="col">seat</th><th scope="col">hand left</th><th scope="col">pips</th><th scope="col">penalty</th></tr></thead>`;
  const body = document.createElement("tbody");
  s.hands.forEach((hand, seat) => {
    const tr = document.createElement("tr");
    tr.innerHTML = `<th scope="row">${name(seat)}</th><td class="hand-cell"></td><td>${s.hand_pips[seat]}</td><td>${!s.penalties ? "—" : s.penalties[seat] ? "−" + s.penalties[seat] : "0"}</td>`;
    const cell = tr.querySelector(".hand-cell");
    if (!hand.length) cell.textContent = "out";
    for (const tile of hand) { const g = tileSvg(tile, 32); g.setAttribute("aria-hidden", "false"); g.setAttribute("role", "img"); g.setAttribute("aria-label", tile); cell.appendChild(g); }
    body.appendChild(tr);
  });
  table.appendChild(body); box.appendChild(table);
}

// A tile pressed: played at once, or, when it fits more than one end, its ends offered as
// buttons below the hand and as slots on the board (click the end itself).
function choose(tile, button) {
  if (game.busy || game.review !== null) return;
  const options = game.view.options.filter((o) => o.tile === tile);
  if (options.length === 1) return play(options[0].move);
  for (const b of $("hand").querySelectorAll(".chosen")) b.classList.remove("chosen");
  button.classList.add("chosen");
  $("prompt").innerHTML = `<span>${tile} fits ${options.length} ends: choose one here or on the board</span> `;
  const targets = {};
  for (const option of options) {
    const b = document.createElement("button");
    const points = option.points ? "+" + option.points : "no points";
    b.type = "button"; b.className = "end-choice";
    b.textContent = `${option.text} (${points})`;
    b.addEventListener("click", () => play(option.move));
    $("prompt").appendChild(b);
    targets[option.end] = { label: `${option.end} ${option.points ? "+" + option.points : "·"}`, aria: `play ${option.text} (${points})`, choose: () => play(option.move) };
  }
  const view = game.view;
  drawBoard($("board"), view.board, view.marked, view.count, targets);
  $("prompt").querySelector("button").focus();
}

const pct = (e) => `${(100 * e.mean).toFixed(1)}% [${(100 * e.low).toFixed(1)}, ${(100 * e.high).toFixed(1)}]`;
const pts = (e) => `${e.mean.toFixed(1)} [${e.low.toFixed(1)}, ${e.high.toFixed(1)}]`;

// The hint's table: a ★ only when the best move is told apart from the next one (its
// paired loss interval above 0), a legend of the columns, and (in a game) a row plays its move.
function showHint(box, h, playable) {
  const star = h.separated ? "★ " : "";
  const rows = h.moves.map((m, i) => `<tr class="${i === 0 ? "best" : ""}" data-move="${m.move}"${playable ? ' tabindex="0"' : ""}><th scope="row">${i === 0 ? star : ""}${m.name}</th><td>${m.now}</td><td>${pct(m.win)}</td><td>${i === 0 ? "—" : pct(m.loss)}</td><td>${pts(m.points)}</td><td>${m.heuristics.join(", ") || "-"}</td></tr>`);
  const verdict = h.separated ? "★ the best move is separated from the next (the next one's loss interval lies above 0)" : "not separated: the best two moves' intervals overlap, so the order may be chance";
  box.innerHTML = `<div class="scroll" tabindex="0" role="region" aria-label="the hint's moves"><table id="hint-table"><caption>${verdict}</caption><thead><tr><th scope="col">move</th><th scope="col">now</th><th scope="col">chance to win (95%)</th><th scope="col">loss vs best (95%)</th><th scope="col">round points (95%)</th><th scope="col">heuristics</th></tr></thead><tbody>${rows.join("")}</tbody></table></div>` +
    `<p class="legend"><b>now</b>: points the placement scores at once · <b>chance to win</b>: of the game, for your side · <b>loss vs best</b>: win chance given up against the best move on the same deals (0 at best) · <b>round points</b>: your side's points to the end of the round · <b>heuristics</b>: the simple strategies that would play it · ${h.budget} play-outs per move, ${h.seconds} s, as <code>sniff hint</code>${playable ? " · click a row (or Enter) to play it" : ""}</p>`;
  if (!playable) return;
  for (const row of box.querySelectorAll("tr[data-move]")) {
    const go = () => play(Number(row.dataset.move));
    row.addEventListener("click", go);
    row.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); go(); } });
  }
}

// The page: three modes (a game, a replay, the set-up board), each with its own route
// (#/game, #/replay, #/setup), section and state, so one never overwrites another and the
// browser's back button moves between them. A game's session id is kept in sessionStorage
// (per tab). Everything shown comes from /api; no rule is here.
"use strict";
const $ = (id) => document.getElementById(id);
const TOKEN = document.querySelector('meta[name="sniff-token"]').content;
const STEP_MS = 450;  // pause between two bot placements shown one after another

async function api(method, path, body, raw) {
  const options = { method, headers: { "x-sniff-token": TOKEN } };
  if (raw !== undefined) options.body = raw;
  else if (body !== undefined) { options.body = JSON.stringify(body); options.headers["content-type"] = "application/json"; }
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

function fail(error) { $("error").textContent = error.message || String(error); }
function say(text) { $("status").textContent = text; }

// ---------------------------------------------------------------- routes
const MODES = ["game", "replay", "setup"];
function route() {
  const mode = (location.hash.match(/^#\/(\w+)/) || [])[1];
  const shown = MODES.includes(mode) ? mode : "game";
  for (const m of MODES) {
    $("mode-" + m).hidden = m !== shown;
    $("nav-" + m).setAttribute("aria-current", m === shown ? "page" : "false");
  }
  $("error").textContent = "";
  document.dispatchEvent(new CustomEvent("mode", { detail: shown }));
}
window.addEventListener("hashchange", route);

// ---------------------------------------------------------------- the game
const game = { view: null, busy: false, review: null, history: null, timer: null, clickedAt: null };
window.sniffTimings = [];  // ms from a click to the first drawing of its answer (tests read it)
function drawn() {
  if (game.clickedAt !== null) { window.sniffTimings.push(performance.now() - game.clickedAt); game.clickedAt = null; }
}

async function loadSetup() {
  const info = await api("GET", "/api/strategies");
  for (const name of info.strategies) $("opponents").add(new Option(name, name, name === info.default, name === info.default));
  const seats = () => {
    const n = Number($("players").value);
    $("seat").innerHTML = "";
    for (let s = 0; s < n; s++) $("seat").add(new Option(String(s), String(s)));
    $("target").max = info.targets[n]; $("target").value = info.targets[n];
  };
  $("players").addEventListener("change", seats);
  seats();
}

function lock(on) {
  game.busy = on;
  $("hand").classList.toggle("locked", on);
  for (const b of $("hand").querySelectorAll("button")) b.disabled = on || !b.classList.contains("legal");
}

async function send(path, body) {
  if (game.busy) return;  // one request per decision: the hand is locked until it is drawn
  lock(true);
  $("error").textContent = "";
  game.clickedAt = performance.now();
  try { await show(await api("POST", path, body)); }
  catch (error) { fail(error); lock(false); game.clickedAt = null; }
}

async function newGame(event) {
  event.preventDefault();
  const body = { players: Number($("players").value), seat: Number($("seat").value),
    opponents: $("opponents").value, target: Number($("target").value) };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  $("hints").innerHTML = ""; $("analysis").innerHTML = "";
  say("dealing (the first game with a new set of opponents compiles them: about 20-40 s)...");
  game.view = null;
  await send("/api/games", body);
  $("new-game").open = false;
}

const sleep = (ms) => new Promise((done) => { game.timer = setTimeout(done, ms); });

// The other seats' placements since the person's last move, one after another.
async function animate(view) {
  const frames = view.recent || [];
  if ($("instant").checked || !frames.length || !game.view) return;
  for (const frame of frames) {
    drawBoard($("board"), frame.board, [frame.line.tiles[0]].filter(Boolean));
    drawSeats(view, frame.sizes);
    $("log").appendChild(lineItem(frame.line));
    say(frame.line.text);
    drawn();
    await sleep(STEP_MS);
  }
}

// The seats around the table: the others above the board, you below it (next to your hand).
function drawSeats(view, sizes) {
  const box = $("seats"); box.innerHTML = ""; $("me").innerHTML = "";
  for (const seat of view.seats) {
    const div = document.createElement("div");
    const where = (seat.seat - view.seat + view.players) % view.players;
    div.className = `seat at-${view.players}-${where}` + (seat.turn ? " turn" : "") + (seat.you ? " you" : "");
    const n = sizes ? sizes[seat.seat] : seat.tiles;
    const team = view.players === 4 ? ` · ${view.teams[seat.team]}` : "";
    div.innerHTML = `<b></b> <span class="who"></span><span class="backs" aria-hidden="true"></span> <span class="count"></span>`;
    div.querySelector("b").textContent = seat.you ? "You" : `Seat ${seat.seat}`;
    div.querySelector(".who").textContent = seat.you ? team : ` (${seat.strategy})${team}`;
    if (!seat.you) div.querySelector(".backs").textContent = "▮".repeat(Math.min(n, 12));
    div.querySelector(".count").textContent = `${n} tile${n === 1 ? "" : "s"}${seat.turn ? " · to play" : ""}`;
    (seat.you ? $("me") : box).appendChild(div);
  }
  const yard = document.createElement("div");
  yard.className = "seat boneyard"; yard.textContent = `boneyard ${game.view ? game.view.boneyard : 0}`;
  box.appendChild(yard);
}

async function show(view) {
  const first = !game.view || game.view.session !== view.session;
  if (!first) await animate(view);
  game.view = view; game.review = null; game.history = null;
  sessionStorage.setItem("sniff-session", view.session);
  if (location.hash !== "#/game") history.replaceState(null, "", "#/game");
  drawGame();
  drawn();
  lock(false);
  const focus = view.phase === "settled" ? $("next") : $("hand").querySelector("button.legal");
  if (focus && document.activeElement && (document.activeElement === document.body || document.activeElement.closest("#hand, #prompt, #actions, #hints"))) focus.focus();
}

function drawGame() {
  const view = game.view;
  drawBoard($("board"), view.board, view.marked, view.count);
  drawSeats(view);
  const ends = Object.entries(view.board.ends || {}).filter(([, v]) => v !== null);
  $("ends").textContent = ends.length ? `open ends ${ends.map(([a, v]) => `${a}=${v}`).join(" ")} · count ${view.count} · scores ${view.scores.map((v, t) => `${view.teams[t]}${t === view.my_team ? " (you)" : ""} ${v}`).join(", ")}` : "";
  drawHand($("hand"), view.hand, new Set(view.options.map((o) => o.tile)), choose);
  $("prompt").innerHTML = "";
  $("hint").disabled = view.phase !== "move" || !view.options.length;
  $("takeback").disabled = !view.can_take_back;
  $("to-setup").disabled = false;
  $("next").hidden = view.phase !== "settled";
  $("trace").hidden = $("analyse").hidden = view.phase !== "over";
  if (view.phase === "over") { $("trace").href = `/api/games/${view.session}/trace`; $("trace").download = `serve-seed${view.seed}.jsonl`; }
  $("banner").hidden = view.phase !== "over";
  $("banner").textContent = view.banner || "";
  $("banner").className = view.phase === "over" && view.winner === view.my_team ? "won" : "";
  const status = { move: view.forced ? "you drew a tile that fits: choose its end" : "your move: choose a highlighted tile",
    settled: `round ${view.round} settled: see the hands below, then Next round`, over: view.banner };
  say(`round ${view.round} · target ${view.target} · ` + status[view.phase]);
  $("status").dataset.phase = view.phase;
  $("log").innerHTML = "";
  for (const line of view.log) $("log").appendChild(lineItem(line));
  $("log").scrollTop = $("log").scrollHeight;
  drawSheet(view);
  drawSettlement(view);
  $("moves").innerHTML = ""; $("moves").dataset.loaded = "";
}

function drawSheet(view) {
  const head = `<thead><tr><th scope="col">round</th>${view.teams.map((t, i) => `<th scope="col">${t}${i === view.my_team ? " (you)" : ""}</th>`).join("")}</tr></thead>`;
  const cell = (r, t) => `<td><span class="gain">+${r.gained[t]}</span>${r.penalties[t] ? ` <span class="pen">−${r.penalties[t]}</span>` : ""} = <b>${r.scores[t]}</b></td>`;
  const rows = view.sheet.map((r) => `<tr><th scope="row">${r.round}</th>${r.scores.map((_, t) => cell(r, t)).join("")}</tr>`);
  $("sheet").innerHTML = head + `<tbody>${rows.join("")}</tbody><tfoot><tr><th scope="row">now</th>${view.scores.map((v) => `<th>${v}</th>`).join("")}</tr></tfoot>`;
}

function drawSettlement(view) {
  const box = $("settlement"); box.innerHTML = "";
  const s = view.settlement;
  if (!s) return;
  const name = (seat) => seat === view.seat ? "you" : "seat " + seat;
  const who = s.reason === "target" ? `${name(s.winner_seat)} reached the target; the hands as they stand`
    : s.winner_seat === null ? "blocked: no one went out" : `${name(s.winner_seat)} went out`;
  const table = document.createElement("table");
  table.innerHTML = `<caption>Round ${s.round} settled (${who})</caption><thead><tr><th scope="col">seat</th><th scope="col">hand left</th><th scope="col">pips</th><th scope="col">penalty</th></tr></thead>`;
  const body = document.createElement("tbody");
  s.hands.forEach((hand, seat) => {
    const tr = document.createElement("tr");
    tr.innerHTML = `<th scope="row">${seat === view.seat ? "you" : "seat " + seat}</th><td class="hand-cell"></td><td>${s.hand_pips[seat]}</td><td>${!s.penalties ? "—" : s.penalties[seat] ? "−" + s.penalties[seat] : "0"}</td>`;
    const cell = tr.querySelector(".hand-cell");
    if (!hand.length) cell.textContent = "out";
    for (const tile of hand) { const g = tileSvg(tile, 32); g.setAttribute("aria-hidden", "false"); g.setAttribute("role", "img"); g.setAttribute("aria-label", tile); cell.appendChild(g); }
    body.appendChild(tr);
  });
  table.appendChild(body); box.appendChild(table);
}

function choose(tile, button) {
  if (game.busy || game.review !== null) return;
  const options = game.view.options.filter((o) => o.tile === tile);
  if (options.length === 1) return play(options[0].move);
  button.classList.add("chosen");
  $("prompt").innerHTML = `<span>${tile} fits two ends:</span> `;
  for (const option of options) {
    const b = document.createElement("button");
    b.type = "button"; b.className = "end-choice";
    b.textContent = `${option.text} (${option.points ? "+" + option.points : "no points"})`;
    b.addEventListener("click", () => play(option.move));
    $("prompt").appendChild(b);
  }
  $("prompt").querySelector("button").focus();
}

function play(move) {
  $("hints").innerHTML = "";
  return send(`/api/games/${game.view.session}/move`, { move, version: game.view.version });
}

const pct = (e) => `${(100 * e.mean).toFixed(1)}% [${(100 * e.low).toFixed(1)}, ${(100 * e.high).toFixed(1)}]`;
const pts = (e) => `${e.mean.toFixed(1)} [${e.low.toFixed(1)}, ${e.high.toFixed(1)}]`;

async function hint() {
  $("hints").textContent = "thinking...";
  try {
    showHint($("hints"), await api("POST", `/api/games/${game.view.session}/hint`, { budget: Number($("budget").value) }), true);
  } catch (error) { $("hints").textContent = ""; fail(error); }
}

// The hint's table: a ★ only when the best move is told apart from the next one (its
// paired loss interval above 0), a legend of the columns, and (in a game) a row plays its move.
function showHint(box, h, playable) {
  const star = h.separated ? "★ " : "";
  const rows = h.moves.map((m, i) => `<tr class="${i === 0 ? "best" : ""}" data-move="${m.move}"${playable ? ' tabindex="0"' : ""}><th scope="row">${i === 0 ? star : ""}${m.name}</th><td>${m.now}</td><td>${pct(m.win)}</td><td>${i === 0 ? "—" : pct(m.loss)}</td><td>${pts(m.points)}</td><td>${m.heuristics.join(", ") || "-"}</td></tr>`);
  const verdict = h.separated ? "★ the best move is separated from the next (the next one's loss interval lies above 0)" : "not separated: the best two moves' intervals overlap, so the order may be chance";
  box.innerHTML = `<table id="hint-table"><caption>${verdict}</caption><thead><tr><th scope="col">move</th><th scope="col">now</th><th scope="col">chance to win (95%)</th><th scope="col">loss vs best (95%)</th><th scope="col">round points (95%)</th><th scope="col">heuristics</th></tr></thead><tbody>${rows.join("")}</tbody></table>` +
    `<p class="legend"><b>now</b>: points the placement scores at once · <b>chance to win</b>: of the game, for your side · <b>loss vs best</b>: win chance given up against the best move on the same deals (0 at best) · <b>round points</b>: your side's points to the end of the round · <b>heuristics</b>: the simple strategies that would play it · ${h.budget} play-outs per move, ${h.seconds} s, as <code>sniff hint</code>${playable ? " · click a row (or Enter) to play it" : ""}</p>`;
  if (!playable) return;
  for (const row of box.querySelectorAll("tr[data-move]")) {
    const go = () => play(Number(row.dataset.move));
    row.addEventListener("click", go);
    row.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); go(); } });
  }
}

// ---------------------------------------------------------------- the move list
async function loadMoves() {
  if (!game.view) return null;
  if (!game.history) {
    game.history = (await api("GET", `/api/games/${game.view.session}/history`)).frames;
    const list = $("moves"); list.innerHTML = "";
    game.history.forEach((frame, i) => {
      const li = lineItem(frame.line);
      li.dataset.index = i;
      li.addEventListener("click", () => reviewAt(i));
      list.appendChild(li);
    });
  }
  return game.history;
}

async function reviewAt(index) {
  const frames = await loadMoves();
  if (!frames) return;
  if (index >= frames.length - 1 || index < 0 && game.review === null) return live();
  game.review = Math.max(0, index);
  const frame = frames[game.review];
  drawBoard($("board"), frame.board, frame.line.kind === "play" ? frame.line.tiles : []);
  drawHand($("hand"), frame.hands[game.view.seat] || [], new Set(), () => {});
  for (const li of $("moves").children) li.classList.toggle("current", Number(li.dataset.index) === game.review);
  const current = $("moves").querySelector(".current");
  if (current) current.scrollIntoView({ block: "nearest" });
  say(`reviewing event ${game.review + 1} of ${frames.length}: ${frame.line.text} (Back to the game returns)`);
  $("status").dataset.phase = "review";
}

function live() { if (game.view) { game.review = null; drawGame(); lock(false); } }

function step(delta) {
  if (!game.view) return;
  const at = game.review === null ? (game.history ? game.history.length - 1 : game.view.events - 1) : game.review;
  reviewAt(at + delta).catch(fail);
}

async function takeBack() {
  $("hints").innerHTML = "";
  await send(`/api/games/${game.view.session}/takeback`, { version: game.view.version });
}

async function toSetup() {
  try {
    const frames = await loadMoves();
    const index = game.review === null ? frames.length - 1 : game.review;
    const position = await api("POST", `/api/games/${game.view.session}/position`, { event: index });
    openSetup(position.text);
  } catch (error) { fail(error); }
}

async function analyse() {
  $("analysis").textContent = "analysing every decision of yours (a few seconds)...";
  try {
    const a = await api("POST", `/api/games/${game.view.session}/analysis`, {});
    const rows = a.decisions.map((d) => `<tr class="${d.mark ? "costly" : ""}"><th scope="row">${d.round}.${d.turn}</th><td>${d.played} ${d.mark}</td><td>${(100 * d.win).toFixed(1)}%</td><td>${d.best}</td><td>${(100 * d.loss.mean).toFixed(1)} [${(100 * d.loss.low).toFixed(1)}, ${(100 * d.loss.high).toFixed(1)}]</td></tr>`);
    $("analysis").innerHTML = `<table><caption>Your decisions (as <code>sniff replay --analyze</code>, ${a.budget} play-outs per move): ? gives up ≥ ${100 * a.mistake} points of win chance, ?? ≥ ${100 * a.blunder}, interval above 0</caption><thead><tr><th scope="col">round.turn</th><th scope="col">played</th><th scope="col">win</th><th scope="col">best</th><th scope="col">loss (points of %)</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
  } catch (error) { $("analysis").textContent = ""; fail(error); }
}

async function resume() {
  // ?session=ID opens a game made elsewhere (scripts/serve_screenshots.py uses it).
  const session = new URLSearchParams(location.search).get("session") || sessionStorage.getItem("sniff-session");
  if (!session) return;
  try { await show(await api("GET", `/api/games/${session}`)); $("new-game").open = false; }
  catch (error) { sessionStorage.removeItem("sniff-session"); }
}

$("setup").addEventListener("submit", (e) => newGame(e).catch(fail));
$("next").addEventListener("click", () => send(`/api/games/${game.view.session}/next`, { version: game.view.version }));
$("hint").addEventListener("click", hint);
$("takeback").addEventListener("click", () => takeBack().catch(fail));
$("to-setup").addEventListener("click", toSetup);
$("analyse").addEventListener("click", analyse);
$("moves-first").addEventListener("click", () => reviewAt(0).catch(fail));
$("moves-prev").addEventListener("click", () => step(-1));
$("moves-next").addEventListener("click", () => step(1));
$("moves-live").addEventListener("click", live);
document.addEventListener("keydown", (e) => {
  if ($("mode-game").hidden || !game.view || e.target.closest("input, select, textarea")) return;
  if (e.key === "ArrowLeft") { e.preventDefault(); step(-1); }
  else if (e.key === "ArrowRight") { e.preventDefault(); step(1); }
  else if (e.key === "Home" && e.target.closest("#moves")) { e.preventDefault(); reviewAt(0).catch(fail); }
  else if (e.key === "End" || e.key === "Escape") { if (game.review !== null) { e.preventDefault(); live(); } }
});
loadSetup().then(resume).catch(fail);  // route() runs once every script is loaded (setup.js)

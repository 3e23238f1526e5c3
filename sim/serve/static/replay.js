// Replay: a trace file uploaded to /api/replay comes back as one frame per event; the
// buttons, the slider and the arrow keys step through them on the replay's own board. A
// trace is a finished game, so every hand is shown. Its state is its own (replay.*).
"use strict";
const replay = { frames: [], text: null, game: 0 };

function showFrame(index) {
  const frames = replay.frames, frame = frames[index];
  $("replay-step").value = index;
  $("replay-where").textContent = `event ${index + 1} of ${frames.length} · round ${frame.round} · ${frame.event}`;
  drawBoard($("replay-board"), frame.board, frame.event === "play" ? frame.line.tiles : []);
  $("replay-line").innerHTML = ""; $("replay-line").appendChild(lineItem(frame.line, "span"));
  const hands = $("replay-hands"); hands.innerHTML = "";
  frame.hands.forEach((hand, seat) => {
    const row = document.createElement("div"); row.className = "replay-hand";
    row.textContent = `seat ${seat}: ${hand.length ? "" : "(none)"}`;
    for (const tile of hand) { const g = tileSvg(tile, 36); g.setAttribute("role", "img"); g.setAttribute("aria-label", tile); g.setAttribute("aria-hidden", "false"); row.appendChild(g); }
    hands.appendChild(row);
  });
  const meta = document.createElement("div");
  meta.textContent = `boneyard ${frame.boneyard} · scores ${frame.scores.join(", ")}`;
  hands.appendChild(meta);
}

async function loadTrace() {
  const file = $("replay-file").files[0];
  if (!file) return;
  $("error").textContent = "";
  try {
    replay.text = await file.text();
    replay.game = Number($("replay-game").value) || 0;
    const data = await api("POST", `/api/replay?game=${replay.game}`, undefined, "checking the trace against the rules", replay.text);
    replay.frames = data.frames;
    $("replay-step").max = replay.frames.length - 1;
    $("replay-controls").hidden = false;
    showFrame(0);
  } catch (error) { fail(error); }
}

function replayStep(delta) {
  if (!replay.frames.length) return;
  const at = Number($("replay-step").value) + delta;
  showFrame(Math.min(replay.frames.length - 1, Math.max(0, at)));
}

async function replaySetup() {
  try {
    const at = Number($("replay-step").value);
    const position = await api("POST", `/api/replay/position?game=${replay.game}&event=${at}`, undefined, "writing the position", replay.text);
    openSetup(position.text);
  } catch (error) { fail(error); }
}

$("replay-file").addEventListener("change", loadTrace);
$("replay-game").addEventListener("change", loadTrace);
$("replay-prev").addEventListener("click", () => replayStep(-1));
$("replay-next").addEventListener("click", () => replayStep(1));
$("replay-step").addEventListener("input", () => replay.frames.length && showFrame(Number($("replay-step").value)));
$("replay-setup").addEventListener("click", replaySetup);
document.addEventListener("keydown", (e) => {
  if ($("mode-replay").hidden || e.target.closest("input[type=number], input[type=file], textarea")) return;
  if (e.key === "ArrowLeft") { e.preventDefault(); replayStep(-1); }
  else if (e.key === "ArrowRight") { e.preventDefault(); replayStep(1); }
});

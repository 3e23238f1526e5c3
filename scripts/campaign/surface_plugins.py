"""The ``plugins`` surface: ``--plugin`` modules and ``register_python`` players that raise,
loop, allocate or answer the wrong type."""

from __future__ import annotations

import subprocess

from outcomes import Case, Context

# ------------------------------------------------------------------ plugins


def plugin_cases() -> list[Case]:
    cases = []
    small = ["simulate", "--players", "2", "--games", "20", "-o", "out", "-q"]

    def with_plugin(module: str, *command: str) -> list[str]:
        return ["--plugin", module, *command]

    for module in ("cp_raise_import", "cp_exit_import", "cp_syntax", "cp_registers_nothing",
                   "does_not_exist", "../etc/passwd", "/tmp/x.py", "", "os", "a b",
                   "cp_players.value_error", "pl\u00e4gin", "x" * 5000, "sim.cli.main"):
        expect = "either" if module in ("os", "cp_registers_nothing", "sim.cli.main") else "refuse"
        cases.append(Case("plugins", f"--plugin {module[:40]!r}",
                          with_plugin(module, *small, "--strategies", "greedy,random"),
                          expect=expect, check=(lambda c, o: None) if expect == "either"
                          else None))
    cases.append(Case("plugins", "--plugin whose import raises KeyboardInterrupt",
                      with_plugin("cp_baseexc_import", *small, "--strategies", "greedy,random"),
                      expect="either", check=lambda c, o: None))
    cases.append(Case("plugins", "--plugin whose import hangs (Ctrl-C)",
                      with_plugin("cp_hang_import", *small, "--strategies", "greedy,random"),
                      interrupt=True, timeout=15))
    cases.append(Case("plugins", "SNIFF_PLUGINS of garbage", [*small, "--strategies",
                                                             "greedy,random"],
                      env={"SNIFF_PLUGINS": ",,;\x1b[31m,../x"}))
    players = ("cp_value_error", "cp_recursion", "cp_alloc", "cp_grow", "cp_none", "cp_floats",
               "cp_bool", "cp_2d", "cp_huge_int", "cp_uint", "cp_bad_array", "cp_bad_len",
               "cp_string", "cp_generator", "cp_negative", "cp_systemexit")
    for name in players:
        cases.append(Case("plugins", f"Python player {name}",
                          with_plugin("cp_players", *small, "--strategies", f"{name},greedy"),
                          timeout=120, own_memory=name in ("cp_alloc", "cp_grow")))
    cases.append(Case("plugins", "Python player cp_keyboard (raises KeyboardInterrupt)",
                      with_plugin("cp_players", *small, "--strategies", "cp_keyboard,greedy"),
                      expect="either", check=lambda c, o: None))
    for name in ("cp_sleep", "cp_spin"):
        cases.append(Case("plugins", f"Python player {name} (Ctrl-C)",
                          with_plugin("cp_players", *small, "--strategies", f"{name},greedy"),
                          interrupt=True, timeout=20))
    commands = {
        "tournament": ["tournament", "--players", "2", "--strategies", "cp_value_error,greedy",
                       "--games-per-pair", "20", "--out", "out", "-q"],
        "openings": ["openings", "--players", "2", "--strategies", "cp_value_error", "--deals",
                     "1", "-o", "out", "-q"],
        "compare": ["compare", "cp_value_error", "greedy", "--players", "2", "--max-games",
                    "100", "-o", "out", "-q"],
        "play": ["play", "--players", "2", "--opponents", "cp_value_error", "--seed", "1",
                 "--trace", "out"]}

    def nothing_left(ctx, outcome):
        return None if not (ctx.dir / "out").exists() else "left out/ behind"
    for command, args in commands.items():
        cases.append(Case("plugins", f"{command} with a Python player that raises",
                          with_plugin("cp_players", *args), check=nothing_left,
                          stdin="/dev/null"))
    cases.append(Case("plugins", "Python player that writes into its inputs",
                      with_plugin("cp_players", *small, "--strategies", "cp_mutates,greedy"),
                      expect="either", check=lambda c, o: _verify_replays(c)))
    for name in ("cp_c_raises", "cp_c_range", "cp_c_alloc"):
        cases.append(Case("plugins", f"compiled strategy {name}",
                          with_plugin("cp_compiled", *small, "--strategies", f"{name},greedy"),
                          timeout=180, own_memory=name == "cp_c_alloc"))
    cases.append(Case("plugins", "compiled strategy returning a float",
                      with_plugin("cp_float_choose", *small, "--strategies", "cp_c_float,greedy"),
                      timeout=180))
    cases.append(Case("plugins", "a plugin registering a built-in's name",
                      with_plugin("cp_name_clash", *small, "--strategies", "greedy,random")))
    cases.append(Case("plugins", "a multiprocessing.py in the working folder, local:2",
                      ["simulate", "--players", "2", "--games", "400", "--scheduler", "local:2",
                       "-o", "out", "-q"],
                      lambda ctx: (ctx.dir / "multiprocessing.py").write_text(ctx.payload()),
                      expect="either", check=lambda c, o: None, timeout=240))
    cases.append(Case("plugins", "a numba.py in the working folder",
                      [*small, "--strategies", "greedy,random"],
                      lambda ctx: (ctx.dir / "numba.py").write_text(ctx.payload()),
                      expect="either", check=lambda c, o: None))
    return cases


def _verify_replays(ctx: Context) -> str | None:
    done = subprocess.run(ctx.campaign.sniff + ["--plugin", "cp_players", "verify", "out",
                                                "--replay", "20"],
                          cwd=ctx.dir, env=ctx.env, capture_output=True, text=True, timeout=120)
    return None if done.returncode == 0 else \
        f"verify --replay: {done.stdout[-200:]} {done.stderr[-200:]}"

#!/usr/bin/env python3
"""Mutation score of the engine's core: how many small deliberate bugs the tests catch.

Each mutant is one small change to one line of a core source file (a comparison flipped, an
off-by-one, a condition negated or a branch disabled, a boolean result flipped). For every
mutant the tool rebuilds the affected test programs incrementally, runs them, and counts the
mutant as killed when a test fails (or hangs past the timeout), survived when all pass, and
stillborn when it does not compile (not counted). The source is restored after every mutant,
also on Ctrl+C.

    tests/mutation/mutate.py [--build DIR] [--only liveness,validator,...] [--per-file N]
                             [--seed S] [--list] [--json OUT]

The build directory (default build-mutation) is configured on every run, without the GUI and
with libstdc++'s assertions (-D_GLIBCXX_ASSERTIONS), whatever it was configured with before. Do
not edit the tree while it runs. Not part of CI: a full run takes about an hour on 2 cores.
"""
import argparse
import fnmatch
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Each module: the files mutated and the test programs (glob patterns under <build>/tests)
# that cover them, fastest first: the first failing one kills the mutant.
MODULES = {
    "liveness": (["engine/liveness/liveness.cpp"],
                 ["engine_test_liveness*", "engine_test_golden", "engine_test_planner"]),
    "validator": (["engine/plan/validator.cpp"],
                  ["engine_test_validator", "engine_test_checkpoint", "engine_test_strategies"]),
    "placement": (["engine/plan/strategies/placement.cpp"],
                  ["engine_test_strategies", "engine_test_planner", "engine_test_optimal"]),
    "linear_scan": (["engine/plan/linear_scan.cpp"],
                    ["engine_test_linear_scan", "engine_test_golden", "engine_test_planner"]),
    "optimal": (["engine/plan/strategies/optimal_search.cpp",
                 "engine/plan/strategies/optimal.cpp"],
                ["engine_test_optimal*"]),
    "checkpoint": (["engine/io/checkpoint.cpp", "engine/io/checkpoint_read.cpp",
                    "engine/io/checkpoint_write.cpp"],
                   ["engine_test_checkpoint", "engine_test_hash"]),
    "session_integrity": (["sessions/session_store.cpp"], ["sessions_test_session_store"]),
}


@dataclass
class Mutant:
    path: str
    line: int  # 1-based
    before: str
    after: str
    kind: str
    outcome: str = ""
    killer: str = ""

    def where(self):
        return f"{self.path}:{self.line}"


# (kind, pattern, replacement): applied at every match on a code line, one match per mutant.
OPERATORS = [
    ("comparison", r" < ", " <= "),
    ("comparison", r" <= ", " < "),
    ("comparison", r" > ", " >= "),
    ("comparison", r" >= ", " > "),
    ("comparison", r" == ", " != "),
    ("comparison", r" != ", " == "),
    ("logic", r" && ", " || "),
    ("logic", r" \|\| ", " && "),
    ("off-by-one", r" \+ 1\b", ""),
    ("off-by-one", r" - 1\b", ""),
    ("negation", r"\(!(?=[A-Za-z_(])", "("),
    ("result", r"return true;", "return false;"),
    ("result", r"return false;", "return true;"),
]


def code_lines(text):
    """Lines worth mutating: code, not comments, preprocessor lines or assertions."""
    in_block = False
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if in_block:
            in_block = "*/" not in stripped
            continue
        if stripped.startswith("/*"):
            in_block = "*/" not in stripped
            continue
        if (not stripped or stripped.startswith("//") or stripped.startswith("#")
                or "static_assert" in stripped or "TMMU_ASSERT" in stripped):
            continue
        yield number, line


def strip_strings(line):
    """The line with string literals blanked, so no mutation lands inside one."""
    return re.sub(r'"(\\.|[^"\\])*"', lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', line)


def branch_mutants(path, number, line):
    """`if (cond)` becomes `if (false && (cond))` when the condition closes on the line."""
    out = []
    for m in re.finditer(r"\bif \(", strip_strings(line)):
        depth, end = 0, None
        for i in range(m.end() - 1, len(line)):
            depth += {"(": 1, ")": -1}.get(line[i], 0)
            if depth == 0:
                end = i
                break
        if end is None:
            continue
        cond = line[m.end():end]
        mutated = line[:m.end()] + "false && (" + cond + ")" + line[end:]
        out.append(Mutant(path, number, line, mutated, "branch removed"))
    return out


def enumerate_mutants(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    mutants = []
    for number, line in code_lines(text):
        masked = strip_strings(line)
        for kind, pattern, replacement in OPERATORS:
            for m in re.finditer(pattern, masked):
                mutated = line[:m.start()] + replacement + line[m.end():]
                mutants.append(Mutant(path, number, line, mutated, kind))
        mutants.extend(branch_mutants(path, number, line))
    return mutants


class Tree:
    """Applies one mutant at a time and always puts the original back."""

    def __init__(self):
        self.saved = {}

    def apply(self, mutant):
        full = os.path.join(ROOT, mutant.path)
        with open(full, encoding="utf-8") as f:
            text = f.read()
        self.saved[full] = text
        lines = text.split("\n")
        assert lines[mutant.line - 1] == mutant.before, f"{mutant.where()} changed under the tool"
        lines[mutant.line - 1] = mutant.after
        with open(full, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))

    def restore(self):
        for full, text in self.saved.items():
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        self.saved.clear()


def run(cmd, timeout=None, quiet=True):
    return subprocess.run(cmd, cwd=ROOT, timeout=timeout,
                          stdout=subprocess.DEVNULL if quiet else None,
                          stderr=subprocess.DEVNULL if quiet else None).returncode


def configure(build):
    """Configures the build every time (cheap when nothing changed), so a directory configured
    earlier without these settings, by hand or by an older version of this tool, gets them."""
    # libstdc++'s checked containers turn an out-of-bounds mutant (i <= size) into an abort,
    # as a sanitized CI build would, instead of a silent read that happens to be harmless.
    print(f"configuring {build} (GUI off, _GLIBCXX_ASSERTIONS) ...", flush=True)
    if run(["cmake", "-S", ROOT, "-B", build, "-G", "Ninja", "-DTMMU_BUILD_GUI=OFF",
            "-DCMAKE_CXX_FLAGS=-D_GLIBCXX_ASSERTIONS"]) != 0:
        sys.exit("mutate.py: cmake failed")


def test_programs(patterns):
    """Test program (CMake target) names matching the patterns: tests/<suite>/test_<x>.cpp
    builds <suite>_test_<x>."""
    names = []
    for suite in sorted(os.listdir(os.path.join(ROOT, "tests"))):
        folder = os.path.join(ROOT, "tests", suite)
        if os.path.isdir(folder):
            names += [f"{suite}_{f[:-4]}" for f in sorted(os.listdir(folder))
                      if f.startswith("test_") and f.endswith(".cpp")]
    programs = []
    for pattern in patterns:
        programs += [n for n in names if fnmatch.fnmatch(n, pattern) and n not in programs]
    return programs


def run_tests(build, programs, timeouts):
    """The first program that fails, or None when all pass."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    for name in programs:
        try:
            rc = subprocess.run([os.path.join(build, "tests", name)], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                timeout=timeouts[name]).returncode
        except subprocess.TimeoutExpired:
            return name + " (timeout)"
        if rc != 0:
            return name
    return None


def baseline(build, programs):
    """Builds, checks every program passes unmutated, and sets each one's timeout."""
    if run(["ninja", "-C", build] + programs) != 0:
        sys.exit("mutate.py: the unmutated tree does not build")
    timeouts = {}
    for name in programs:
        start = time.monotonic()
        if run_tests(build, [name], {name: 600}) is not None:
            sys.exit(f"mutate.py: {name} fails without any mutation; fix that first")
        timeouts[name] = 3 * (time.monotonic() - start) + 10
    return timeouts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build-mutation"))
    parser.add_argument("--only", default=",".join(MODULES))
    parser.add_argument("--per-file", type=int, default=30,
                        help="mutants sampled per file (0: every one)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--json", help="write every mutant and its outcome here")
    args = parser.parse_args()
    modules = [m for m in args.only.split(",") if m]
    for m in modules:
        if m not in MODULES:
            sys.exit(f"mutate.py: unknown module '{m}'; modules: {', '.join(MODULES)}")

    plan = []  # (module, mutants)
    for module in modules:
        files, _ = MODULES[module]
        chosen = []
        for path in files:
            mutants = enumerate_mutants(path)
            if args.per_file and len(mutants) > args.per_file:
                mutants = random.Random(f"{args.seed}:{path}").sample(mutants, args.per_file)
                mutants.sort(key=lambda m: m.line)
            chosen.extend(mutants)
        plan.append((module, chosen))
    if args.list:
        for module, mutants in plan:
            for m in mutants:
                print(f"{module:18} {m.where():48} {m.kind:14} {m.after.strip()}")
        return

    # A run killed hard (SIGKILL, a machine restart) cannot restore its last mutant: refuse to
    # measure on top of one.
    touched = [f for module, _ in plan for f in MODULES[module][0]]
    if subprocess.run(["git", "-C", ROOT, "diff", "--quiet", "--"] + touched).returncode != 0:
        sys.exit("mutate.py: the files to mutate differ from git (a mutant left by a killed "
                 "run?); see git diff, restore them with git checkout -- FILE")
    configure(args.build)
    tree = Tree()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("mutate.py: terminated"))
    results = {}
    try:
        for module, mutants in plan:
            programs = test_programs(MODULES[module][1])
            if not programs:
                sys.exit(f"mutate.py: no test program matches {MODULES[module][1]}")
            timeouts = baseline(args.build, programs)
            print(f"== {module}: {len(mutants)} mutants, tests {', '.join(programs)}", flush=True)
            for i, m in enumerate(mutants, 1):
                tree.apply(m)
                try:
                    if run(["ninja", "-C", args.build] + programs) != 0:
                        m.outcome = "stillborn"
                    else:
                        m.killer = run_tests(args.build, programs, timeouts) or ""
                        m.outcome = "killed" if m.killer else "survived"
                finally:
                    tree.restore()
                print(f"  [{i}/{len(mutants)}] {m.outcome:9} {m.where()}: {m.kind}: "
                      f"{m.after.strip()}", flush=True)
            results[module] = mutants
    finally:
        tree.restore()
        # Leave the build matching the restored sources.
        run(["ninja", "-C", args.build])
    report(results, args.json)


def report(results, json_path):
    print("\n== mutation score ==")
    total_killed = total_live = 0
    for module, mutants in results.items():
        killed = sum(m.outcome == "killed" for m in mutants)
        live = sum(m.outcome in ("killed", "survived") for m in mutants)
        stillborn = sum(m.outcome == "stillborn" for m in mutants)
        total_killed += killed
        total_live += live
        score = 100.0 * killed / live if live else 0.0
        print(f"{module:18} {killed:4} of {live:4} killed  {score:5.1f} %"
              f"   ({stillborn} did not compile)")
    if total_live:
        print(f"{'overall':18} {total_killed:4} of {total_live:4} killed  "
              f"{100.0 * total_killed / total_live:5.1f} %")
    print("\n== survivors ==")
    for module, mutants in results.items():
        for m in mutants:
            if m.outcome == "survived":
                print(f"{m.where()}: {m.kind}\n    - {m.before.strip()}\n    + {m.after.strip()}")
    if json_path:
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump({module: [m.__dict__ for m in mutants] for module, mutants in results.items()},
                      f, indent=1)


if __name__ == "__main__":
    main()

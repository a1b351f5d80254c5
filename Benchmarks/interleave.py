"""Times several shell commands in interleaved rounds: every round runs each command once (in a rotated order),
each after the same preparation. Commands that compete for a disk whose speed drifts (a virtual disk with a burst
budget, a file system still settling) then see the same conditions, which consecutive runs of one command (what
hyperfine does) do not give them.

Usage: interleave.py --rounds R --warmup W --prepare CMD --out FILE [--consecutive] [--reverse] NAME=CMD...
In every command, {n} is replaced by a number unique to the run. Prints per-command medians and writes every time.
--consecutive runs all of one command's rounds before the next command's (hyperfine's way), in the order given, or
the reverse order with --reverse: to see how much the order alone moves the figures.
"""
import argparse, json, statistics, subprocess, sys, time

parser = argparse.ArgumentParser()
parser.add_argument("--rounds", type=int, default=5)
parser.add_argument("--warmup", type=int, default=1)
parser.add_argument("--prepare", default="true")
parser.add_argument("--out", required=True)
parser.add_argument("--consecutive", action="store_true")
parser.add_argument("--reverse", action="store_true")
parser.add_argument("commands", nargs="+", help="NAME=COMMAND")
args = parser.parse_args()
commands = [tuple(spec.split("=", 1)) for spec in args.commands]
order = list(reversed(commands)) if args.reverse else commands

times = {name: [] for name, _ in commands}
run = 0


def timed(name, command, counted):
    global run
    run += 1
    subprocess.run(args.prepare.replace("{n}", str(run)), shell=True, check=True)
    started = time.perf_counter()
    subprocess.run(command.replace("{n}", str(run)), shell=True, check=True)
    if counted:
        times[name].append(time.perf_counter() - started)


if args.consecutive:
    for name, command in order:
        for round_index in range(args.warmup + args.rounds):
            timed(name, command, round_index >= args.warmup)
        print(f"{name}: " + ", ".join(f"{value:.3f} s" for value in times[name]), file=sys.stderr)
else:
    for round_index in range(args.warmup + args.rounds):
        shift = round_index % len(order)
        for name, command in order[shift:] + order[:shift]:
            timed(name, command, round_index >= args.warmup)
        if round_index >= args.warmup:
            print(f"round {round_index - args.warmup + 1}: "
                  + ", ".join(f"{name} {times[name][-1]:.3f} s" for name, _ in commands), file=sys.stderr)

results = {name: {"median": statistics.median(values), "min": min(values), "max": max(values), "times": values}
           for name, values in times.items()}
with open(args.out, "w") as f:
    json.dump({"rounds": args.rounds, "order": "consecutive" + (", reversed" if args.reverse else "") if args.consecutive
               else "interleaved", "results": results}, f, indent=2)
for name, result in results.items():
    print(f"{name:18s} median {result['median']:.3f} s  (min {result['min']:.3f}, max {result['max']:.3f})")

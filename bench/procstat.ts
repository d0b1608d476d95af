/**
 * Per-process CPU and memory from /proc (Linux), for the benchmarks: where the CPU of a run goes
 * (core, dispatchers, the FCM peer, PostgreSQL's backends, nats-server) and peak RSS per process.
 * Elsewhere every figure reads as 0.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

const TICKS = 100; // USER_HZ: CLK_TCK is 100 on every Linux ABI Bun runs on

/** CPU seconds (user + system) a process has used, or 0 when it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    // comm may contain spaces and parentheses: fields start after the last ')'
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / TICKS; // utime, stime (fields 14 and 15)
  } catch {
    return 0;
  }
}

/** Current resident set size in bytes (0 when gone). */
export function rssBytes(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/statm`, "utf8");
    return Number(s.split(" ")[1]) * 4096;
  } catch {
    return 0;
  }
}

/** Peak RSS since start or the last resetPeak (VmHWM), bytes. */
export function peakRssBytes(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Resets VmHWM to the current RSS (Linux >= 4.0, own or root's processes); false when refused. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Processes whose command name (comm) is one of `names`. Read only: nothing is signalled. */
export function pidsNamed(...names: string[]): number[] {
  const out: number[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const comm = readFileSync(`/proc/${e}/comm`, "utf8").trim();
      if (names.includes(comm)) out.push(Number(e));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** A named group of processes whose CPU is summed (e.g. every PostgreSQL backend). */
export interface Group {
  name: string;
  pids: () => number[];
}

export type CpuSnapshot = Map<string, Map<number, number>>;

export function snapshot(groups: Group[]): CpuSnapshot {
  const snap: CpuSnapshot = new Map();
  for (const g of groups) snap.set(g.name, new Map(g.pids().map((p) => [p, cpuSeconds(p)])));
  return snap;
}

/**
 * CPU seconds each group used between two snapshots. A process born in between counts from 0; one
 * that exited in between loses what it used after `a` (PostgreSQL backends of the pool stay).
 */
export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, after] of b) {
    const before = a.get(name) ?? new Map();
    let sum = 0;
    for (const [pid, s] of after) sum += Math.max(0, s - (before.get(pid) ?? 0));
    out[name] = sum;
  }
  return out;
}

/** One line of the load average (1, 5, 15 minutes). */
export function loadAvg(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    return "n/a";
  }
}

/** CPU seconds the whole machine has been busy (all cores, everything but idle and iowait). */
export function machineBusySeconds(): number {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq (steal apart: see stealSeconds; guest time is already in user)
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = f;
    return (user + nice + system + irq + softirq) / TICKS;
  } catch {
    return 0;
  }
}

/** CPU seconds stolen by the hypervisor from this VM so far (all cores): a slower machine, not more work. */
export function stealSeconds(): number {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    return (f[7] ?? 0) / TICKS;
  } catch {
    return 0;
  }
}

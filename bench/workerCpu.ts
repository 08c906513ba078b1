import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';

let ticksPerSecond: number | null = null;

/**
 * CPU time (user + system, seconds) a process has used so far, from /proc/<pid>/stat on Linux; 0 elsewhere
 * (the bench runs on Linux; a 0 there says the number is missing, not that the worker was free).
 */
export function workerCpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces, so split after its closing parenthesis).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond; // utime, stime (fields 14 and 15 of stat)
  } catch {
    return 0;
  }
}

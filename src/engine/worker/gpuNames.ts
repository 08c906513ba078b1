import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The OS's answer is awaited this long at most (system_profiler and PowerShell take about a second cold). */
const TIMEOUT_MS = 5000;

/** Vendor names by PCI id, for a machine without the pci.ids database. */
const VENDORS: Record<string, string> = {
  '10de': 'NVIDIA',
  '1002': 'AMD',
  '1022': 'AMD',
  '8086': 'Intel',
  '1af4': 'virtio',
  '15ad': 'VMware',
  '1414': 'Microsoft',
  '5143': 'Qualcomm',
  '1db7': 'Moore Threads',
};

/** Where distributions keep the PCI id database (pciutils, hwdata). */
const PCI_IDS = ['/usr/share/hwdata/pci.ids', '/usr/share/misc/pci.ids', '/usr/share/pci.ids'];

/**
 * The names of this machine's display adapters, as the OS lists them: what Show Stats names beside the GPU
 * (onnxruntime-node does not say which adapter its WebGPU provider opened). Linux: the PCI display devices
 * in sysfs, named from pci.ids where it is installed; macOS: system_profiler; Windows: the video controllers
 * from CIM. Empty when the OS says nothing in time. Never throws.
 */
export async function gpuNames(platform: string = process.platform): Promise<string[]> {
  try {
    if (platform === 'linux') return linuxGpuNames();
    if (platform === 'darwin') return macGpuNames(await run('system_profiler', ['SPDisplaysDataType', '-json']));
    if (platform === 'win32') {
      const query = '(Get-CimInstance Win32_VideoController).Name';
      return windowsGpuNames(await run('powershell.exe', ['-NoProfile', '-NonInteractive', '-Command', query]));
    }
  } catch {
    // No names: the device line says the graphics API alone, as before.
  }
  return [];
}

/** PCI devices of the display class (0x03xxxx) under a sysfs root, named. */
export function linuxGpuNames(sysfs = '/sys', pciIds: string | null = readPciIds()): string[] {
  const dir = path.join(sysfs, 'bus', 'pci', 'devices');
  const names: string[] = [];
  for (const dev of fs.readdirSync(dir).sort()) {
    const read = (f: string) =>
      fs
        .readFileSync(path.join(dir, dev, f), 'utf8')
        .trim()
        .toLowerCase()
        .replace(/^0x/, '');
    try {
      if (!read('class').startsWith('03')) continue;
      names.push(pciName(read('vendor'), read('device'), pciIds));
    } catch {
      // A device without these files is not a display adapter we can name.
    }
  }
  return names;
}

/** "NVIDIA Corporation GA106 [GeForce RTX 3060]" from pci.ids, else "NVIDIA GPU 10de:2504". */
export function pciName(vendor: string, device: string, pciIds: string | null): string {
  if (pciIds) {
    // Vendor lines start in column 0 ("10de  NVIDIA Corporation"), their devices follow one tab in.
    const at = pciIds.search(new RegExp(`^${vendor}  `, 'm'));
    if (at >= 0) {
      const vendorLine = pciIds.slice(at, pciIds.indexOf('\n', at));
      const block = pciIds.slice(at + vendorLine.length + 1).split(/\n(?=[0-9a-f])/)[0];
      const deviceLine = block.split('\n').find((l) => l.startsWith(`\t${device}  `));
      if (deviceLine) return `${vendorLine.slice(vendor.length + 2)} ${deviceLine.slice(device.length + 3)}`;
    }
  }
  return `${VENDORS[vendor] ?? 'PCI'} GPU ${vendor}:${device}`;
}

/** The adapters' names in `system_profiler SPDisplaysDataType -json`. */
export function macGpuNames(json: string): string[] {
  const parsed = JSON.parse(json) as { SPDisplaysDataType?: { sppci_model?: unknown; _name?: unknown }[] };
  return (parsed.SPDisplaysDataType ?? []).map((d) => d.sppci_model ?? d._name).filter((n): n is string => typeof n === 'string' && n.length > 0);
}

/** One name per line; Windows' own display drivers (no GPU behind them) are left out. */
export function windowsGpuNames(stdout: string): string[] {
  return stdout
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !/^Microsoft (Basic|Remote) (Display|Render)/i.test(l));
}

/**
 * "NVIDIA GeForce RTX 3060", or "one of A, B" when the machine has several: the provider asks Dawn for the
 * high-performance adapter (onnxruntime's webgpu_context.cc), but which one that is only the driver knows.
 */
export function describeGpuNames(names: readonly string[]): string | undefined {
  const unique = [...new Set(names)];
  if (unique.length === 0) return undefined;
  return unique.length === 1 ? unique[0] : `one of ${unique.join(', ')}`;
}

function readPciIds(): string | null {
  for (const f of PCI_IDS) {
    try {
      return fs.readFileSync(f, 'utf8');
    } catch {
      // Not installed here; the next place, or vendor names alone.
    }
  }
  return null;
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: TIMEOUT_MS, windowsHide: true, maxBuffer: 1 << 20 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
  });
}

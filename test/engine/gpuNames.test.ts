// gpuNames.ts: the display adapters the OS lists, named beside the GPU in Show Stats. Linux is read from a
// sysfs tree (a real one written here, and this machine's own); macOS's and Windows' command outputs are
// parsed from samples in the shape those commands print.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { describeDevice } from '../../src/engine/shared/device';
import { describeGpuNames, gpuNames, linuxGpuNames, macGpuNames, pciName, windowsGpuNames } from '../../src/engine/worker/gpuNames';

const PCI_IDS = [
  '# comment line',
  '1002  Advanced Micro Devices, Inc. [AMD/ATI]',
  '\t73bf  Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]',
  '\t2504  (an AMD id equal to an NVIDIA device id)',
  '10de  NVIDIA Corporation',
  '\t2484  GA104 [GeForce RTX 3070]',
  '\t\t1043 87b8  a subsystem line',
  '\t2504  GA106 [GeForce RTX 3060 Lite Hash Rate]',
  '8086  Intel Corporation',
  '\t3e92  CoffeeLake-S GT2 [UHD Graphics 630]',
  'C 03  Display controller',
  '',
].join('\n');

function sysfs(devices: Record<string, Partial<Record<'class' | 'vendor' | 'device', string>>>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-sysfs-'));
  for (const [slot, files] of Object.entries(devices)) {
    const dir = path.join(root, 'bus', 'pci', 'devices', slot);
    fs.mkdirSync(dir, { recursive: true });
    for (const [f, v] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), `${v}\n`);
  }
  return root;
}

describe('gpuNames', () => {
  test('Linux: display-class PCI devices, named from pci.ids, else by vendor and ids', () => {
    const root = sysfs({
      '0000:00:00.0': { class: '0x060000', vendor: '0x8086', device: '0x3e92' },
      '0000:00:02.0': { class: '0x030000', vendor: '0x8086', device: '0x3e92' },
      '0000:01:00.0': { class: '0x030200', vendor: '0x10DE', device: '0x2504' },
      '0000:02:00.0': { class: '0x030000' },
    });
    assert.deepEqual(linuxGpuNames(root, PCI_IDS), [
      'Intel Corporation CoffeeLake-S GT2 [UHD Graphics 630]',
      'NVIDIA Corporation GA106 [GeForce RTX 3060 Lite Hash Rate]',
    ]);
    assert.deepEqual(linuxGpuNames(root, null), ['Intel GPU 8086:3e92', 'NVIDIA GPU 10de:2504']);
  });

  test("pci.ids: a device is looked up in its own vendor's block only", () => {
    assert.equal(pciName('1002', '73bf', PCI_IDS), 'Advanced Micro Devices, Inc. [AMD/ATI] Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]');
    assert.equal(pciName('10de', '2484', PCI_IDS), 'NVIDIA Corporation GA104 [GeForce RTX 3070]');
    assert.equal(pciName('10de', '9999', PCI_IDS), 'NVIDIA GPU 10de:9999');
    assert.equal(pciName('8086', '73bf', PCI_IDS), 'Intel GPU 8086:73bf', "AMD's device id under Intel is not found");
    assert.equal(pciName('abcd', '0001', PCI_IDS), 'PCI GPU abcd:0001');
  });

  test("this machine's sysfs: every name is a display-class device's", async () => {
    const names = await gpuNames('linux');
    const dir = '/sys/bus/pci/devices';
    const display = fs.existsSync(dir) ? fs.readdirSync(dir).filter((d) => fs.readFileSync(path.join(dir, d, 'class'), 'utf8').startsWith('0x03')) : [];
    assert.equal(names.length, display.length);
    assert.deepEqual(await gpuNames('sunos'), [], 'a platform without a lister says nothing');
  });

  test('macOS: system_profiler -json', () => {
    const json = JSON.stringify({
      SPDisplaysDataType: [
        { _name: 'kHW_AppleM1ProItem', sppci_model: 'Apple M1 Pro', spdisplays_mtlgpufamilysupport: 'spdisplays_metal3' },
        { _name: 'AMD Radeon Pro 5500M' },
        { _name: '' },
      ],
    });
    assert.deepEqual(macGpuNames(json), ['Apple M1 Pro', 'AMD Radeon Pro 5500M']);
    assert.deepEqual(macGpuNames('{}'), []);
    assert.throws(() => macGpuNames('not json'));
  });

  test("Windows: CIM's video controllers, without Windows' own display drivers", () => {
    const stdout = 'NVIDIA GeForce RTX 4060 Laptop GPU\r\nIntel(R) UHD Graphics\r\nMicrosoft Basic Display Adapter\r\n\r\n';
    assert.deepEqual(windowsGpuNames(stdout), ['NVIDIA GeForce RTX 4060 Laptop GPU', 'Intel(R) UHD Graphics']);
  });

  test('the device line names one adapter, or says it is one of several', () => {
    assert.equal(describeGpuNames([]), undefined);
    assert.equal(describeGpuNames(['Apple M1 Pro', 'Apple M1 Pro']), 'Apple M1 Pro');
    assert.equal(describeGpuNames(['Intel(R) UHD Graphics', 'NVIDIA GeForce RTX 4060']), 'one of Intel(R) UHD Graphics, NVIDIA GeForce RTX 4060');
    const line = describeDevice({
      setting: 'gpu',
      device: 'gpu',
      gpuApi: 'Metal',
      gpuAdapter: 'Apple M1 Pro',
      gpuCache: 'kept on the GPU',
      reason: 'the device is set to gpu',
    });
    assert.equal(line, 'GPU (WebGPU on Metal, Apple M1 Pro, KV cache kept on the GPU): the device is set to gpu');
    assert.equal(describeDevice({ setting: 'gpu', device: 'cpu', gpuAdapter: 'Apple M1 Pro', reason: 'x' }), 'CPU: x');
  });
});

import os from "node:os";

export interface MachineInfo {
  date: string;
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  availableGiB: number;
  node: string;
  /** 1, 5 and 15 minute load averages (uptime). */
  load: [number, number, number];
}

/** What the figures depend on besides the code: cores, memory, Node and how busy the machine is. */
export async function describeMachine(): Promise<MachineInfo> {
  const [one = 0, five = 0, fifteen = 0] = os.loadavg();
  return {
    date: new Date().toISOString(),
    cores: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? "unknown",
    memoryGiB: os.totalmem() / 2 ** 30,
    availableGiB: os.freemem() / 2 ** 30,
    node: process.version,
    load: [one, five, fifteen],
  };
}

export const formatLoad = (m: MachineInfo) => m.load.map((l) => l.toFixed(2)).join(", ");

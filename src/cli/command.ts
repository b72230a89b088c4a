// What every `provenant` command exports as `run` (main.ts's COMMANDS loads it): its
// arguments after the command's name in, its exit code out. A leaf, so that the commands
// and main.ts, which loads them, do not import each other.
export type Command = (args: string[]) => Promise<number>;

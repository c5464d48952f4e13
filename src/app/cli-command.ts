import { Command } from 'commander';

/**
 * commander's Command, strict about unknown commands: for `mnemo foo --help` (or `mnemo keys foo --help`) commander
 * prints the parent's help and exits 0, because it handles --help before it finds that `foo` is no command. Here an
 * unknown command is an error (exit 1, with the help after it) whatever options follow. Subcommands are made by
 * `createCommand`, so every level inherits it.
 */
export class StrictCommand extends Command {
  override createCommand(name?: string): StrictCommand {
    return new StrictCommand(name);
  }

  /** commander calls this (an internal hook of commander 14) just before it would answer --help. */
  _outputHelpIfRequested(args: string[]): void {
    const first = this.args[0];
    if (this.commands.length > 0 && first !== undefined && !first.startsWith('-') && first !== 'help'
      && !this.commands.some((c) => c.name() === first || c.aliases().includes(first))) {
      (this as unknown as { unknownCommand(): void }).unknownCommand();
    }
    (Command.prototype as unknown as { _outputHelpIfRequested(this: Command, a: string[]): void })._outputHelpIfRequested.call(this, args);
  }

  /** `mnemo help foo`: commander prints the help and exits 1 without saying why; this says so. */
  _dispatchHelpCommand(name?: string): unknown {
    if (name !== undefined && !this.commands.some((c) => c.name() === name || c.aliases().includes(name))) {
      this.error(`error: unknown command '${name}'`, { code: 'commander.unknownCommand' });
    }
    return (Command.prototype as unknown as { _dispatchHelpCommand(this: Command, n?: string): unknown })._dispatchHelpCommand.call(this, name);
  }
}

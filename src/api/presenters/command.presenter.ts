import { type CatalogueSnapshot, type CommandRecord, findSkill } from '@skillhost/core';

/** Response shapes for commands, shared by REST and GraphQL: what users see, no host paths. */
export function presentCommand(command: CommandRecord, snapshot: CatalogueSnapshot) {
  return {
    name: command.name,
    description: command.description,
    argumentHint: command.argumentHint,
    requiredSkills: [...command.requiredSkills],
    // Such a command still loads; running it reports the missing skill.
    missingSkills: command.requiredSkills.filter((name) => findSkill(snapshot.skills, name) === undefined),
  };
}

export function presentCommandList(snapshot: CatalogueSnapshot) {
  const commands = [...snapshot.commands.values()].map((command) => presentCommand(command, snapshot));
  return { count: commands.length, commands };
}

/** The operator's view of the commands scan (a section of the skills admin report), host paths included. */
export function presentCommandReport(snapshot: CatalogueSnapshot) {
  const report = snapshot.commandReport;
  return {
    directories: report.directories,
    valid: [...snapshot.commands.values()].map((command) => ({
      name: command.name,
      path: command.path,
      source: command.source,
      warnings: command.warnings,
    })),
    invalid: report.invalid,
    collisions: report.collisions,
    warnings: report.warnings,
  };
}

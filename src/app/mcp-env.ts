/**
 * The environment variable `mnemo mcp` reads its API key from (a key on the command line would show in `ps`). Apart
 * from mcp.command.ts so that the CLI's help names it without loading the MCP server (cli.ts imports that lazily).
 */
export const MCP_API_KEY_ENV = 'MNEMO_API_KEY';

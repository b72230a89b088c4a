// The store: everything the server and the admin CLI persist, behind the interfaces of
// ./types.ts. Routes and services see `Store`, never an engine; the SQLite engine lives
// in ./sqlite/ and nothing outside that folder knows SQL (docs/server.md, "The store").
export * from './types.js';
export { reducedJson } from './reduced.js';
export { openSqliteStore, type MigrationListener } from './sqlite/index.js';

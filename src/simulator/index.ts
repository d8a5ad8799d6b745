export * from './server.js';
export * from './demo-data.js';
export * from './demo-credentials.js';

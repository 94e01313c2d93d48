// node:http without its ES module namespace. Any `import ... from 'node:http'`
// builds the namespace, which reads every export, including the lazy
// WebSocket, CloseEvent and MessageEvent getters that evaluate Node's bundled
// undici: about 9 MB resident (measured: an ESM import of node:http alone
// peaks at 57.6 MB, of node:https at 48.8) for a program that never uses
// them. process.getBuiltinModule returns the CommonJS exports and leaves those
// getters alone. Type-only imports of node:http are erased and cost nothing.
export const nodeHttp = process.getBuiltinModule('node:http');

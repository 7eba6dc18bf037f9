// editors/vscode/extension.js — starts the TDSL language server (tdsl-lsp, JSON-RPC over stdio)
// for .tdsl files. The grammar alone (syntaxes/) needs none of this: without the server the
// extension still highlights, and says once that the server is missing.
'use strict';
const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration('tdsl');
  const command = config.get('server.path', 'tdsl-lsp');
  const args = config.get('server.args', []);
  const serverOptions = {
    run: { command, args, transport: TransportKind.stdio },
    debug: { command, args, transport: TransportKind.stdio },
  };
  const clientOptions = {
    documentSelector: [{ scheme: 'file', language: 'tdsl' }, { scheme: 'untitled', language: 'tdsl' }],
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher('**/*.tdsl') },
  };
  client = new LanguageClient('tdsl', 'TDSL language server', serverOptions, clientOptions);
  client.start().catch((e) => {
    vscode.window.showWarningMessage(
      `TDSL: cannot start the language server '${command}' (${e.message}); set tdsl.server.path.`);
  });
  context.subscriptions.push({ dispose: () => client && client.stop() });
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };

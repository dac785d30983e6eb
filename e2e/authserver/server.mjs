// A real OAuth 2.0 authorization server for the e2e tests: oidc-provider
// (pinned in e2e/package.json) on 127.0.0.1, issuing client-credentials
// access tokens as JWTs signed with the keys of a JWKS file.
//
//   node authserver/server.mjs --port 0 --keys keys.json [--clients clients.json]
//        [--resource URL] [--allowed-resources URL,URL] [--ttl 300]
//        [--scopes "tools:read tools:write admin"] [--admin-token TOKEN]
//
// Every flag can also come from the environment: AUTHSERVER_PORT,
// AUTHSERVER_KEYS, AUTHSERVER_CLIENTS, AUTHSERVER_RESOURCE,
// AUTHSERVER_ALLOWED_RESOURCES, AUTHSERVER_TOKEN_TTL, AUTHSERVER_SCOPES,
// AUTHSERVER_ADMIN_TOKEN (flags win).
//
// - The issuer is http://127.0.0.1:PORT (port 0 picks a free one). Once it
//   listens, one line goes to stdout: `authserver listening http://127.0.0.1:PORT`.
// - --keys: a JSON file, either {"keys":[...]} or [...], of private JWKs
//   (RSA or EC). The first key signs (its alg, else RS256 for RSA and
//   ES256/384/512 by curve for EC); all of them are served at jwks_uri.
// - Key rotation without a restart: rewrite the key file, then either
//   POST /__authserver/reload with `Authorization: Bearer <admin token>`
//   (answers {"kids":[...]} once the new keys are live; only when an admin
//   token was given) or send SIGHUP (prints `authserver reloaded kids=a,b`).
//   A fresh provider is built from the file and swapped in behind the same
//   listening socket, so issuer and port stay the same.
// - --clients: a JSON array of {client_id, client_secret, scope, ...}; any
//   other oidc-provider client metadata is passed through. Defaults are
//   grant_types ["client_credentials"], no redirect URIs, and
//   token_endpoint_auth_method client_secret_basic (oidc-provider accepts
//   client_secret_post from such a client too). Without the file: reader
//   (tools:read), writer (tools:read tools:write), other (tools:read
//   tools:write) and admin (tools:read tools:write admin), secret
//   "<id>-secret".
// - Resource indicators (RFC 8707): a token request without `resource` gets
//   --resource (default https://mcp-gateway.test/mcp). A requested resource
//   becomes the token's aud; with --allowed-resources only those are
//   accepted (others: invalid_target), otherwise any absolute URI is.
//   Access tokens for a resource are JWTs (typ at+jwt) with iss, aud, sub
//   (= client_id for client credentials), client_id, scope, iat, exp, jti;
//   the scope is what was asked for, limited to --scopes; asking for a
//   scope outside the client's own scope is invalid_scope.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';

import Provider, { errors } from 'oidc-provider';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string' },
    keys: { type: 'string' },
    clients: { type: 'string' },
    resource: { type: 'string' },
    'allowed-resources': { type: 'string' },
    ttl: { type: 'string' },
    scopes: { type: 'string' },
    'admin-token': { type: 'string' },
  },
  strict: true,
});

const env = process.env;
const opt = (flag, name, dflt) => args[flag] ?? env[name] ?? dflt;

const port = Number(opt('port', 'AUTHSERVER_PORT', '0'));
const keysPath = opt('keys', 'AUTHSERVER_KEYS');
const clientsPath = opt('clients', 'AUTHSERVER_CLIENTS');
const defaultResourceURL = opt('resource', 'AUTHSERVER_RESOURCE', 'https://mcp-gateway.test/mcp');
const allowedResources = opt('allowed-resources', 'AUTHSERVER_ALLOWED_RESOURCES', '')
  .split(',').map((s) => s.trim()).filter(Boolean);
const ttl = Number(opt('ttl', 'AUTHSERVER_TOKEN_TTL', '300'));
const resourceScopes = opt('scopes', 'AUTHSERVER_SCOPES', 'tools:read tools:write admin')
  .split(' ').filter(Boolean);
const adminToken = opt('admin-token', 'AUTHSERVER_ADMIN_TOKEN', '');

function die(msg) {
  console.error(`authserver: ${msg}`);
  process.exit(2);
}

if (!Number.isInteger(port) || port < 0 || port > 65535) die(`bad port ${port}`);
if (!keysPath) die('--keys (or AUTHSERVER_KEYS) is required: a JSON file of private JWKs');
if (!Number.isInteger(ttl) || ttl <= 0) die(`bad ttl ${ttl}`);

function loadKeys() {
  const parsed = JSON.parse(readFileSync(keysPath, 'utf8'));
  const keys = Array.isArray(parsed) ? parsed : parsed.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new Error(`${keysPath}: no keys`);
  for (const k of keys) {
    if (!k.kid) throw new Error(`${keysPath}: every key needs a kid`);
    if (!k.d) throw new Error(`${keysPath}: key ${k.kid} is not a private key`);
  }
  return keys;
}

function signingAlg(jwk) {
  if (jwk.alg) return jwk.alg;
  if (jwk.kty === 'RSA') return 'RS256';
  if (jwk.kty === 'EC') return { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }[jwk.crv];
  if (jwk.kty === 'OKP') return 'Ed25519';
  throw new Error(`key ${jwk.kid}: cannot tell its algorithm (kty ${jwk.kty})`);
}

function loadClients() {
  let list;
  if (clientsPath) {
    list = JSON.parse(readFileSync(clientsPath, 'utf8'));
    if (!Array.isArray(list)) throw new Error(`${clientsPath}: want a JSON array of clients`);
  } else {
    list = [
      { client_id: 'reader', scope: 'tools:read' },
      { client_id: 'writer', scope: 'tools:read tools:write' },
      { client_id: 'other', scope: 'tools:read tools:write' },
      { client_id: 'admin', scope: 'tools:read tools:write admin' },
    ].map((c) => ({ ...c, client_secret: `${c.client_id}-secret` }));
  }
  return list.map((c) => ({
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    ...c,
  }));
}

function buildProvider(issuer) {
  const jwks = { keys: loadKeys() };
  const [signer] = jwks.keys;
  const sign = { alg: signingAlg(signer), kid: signer.kid };
  const clients = loadClients();

  const provider = new Provider(issuer, {
    clients,
    jwks,
    scopes: ['openid', 'offline_access', ...resourceScopes],
    // Lets a key set without an RSA key (EC only, say) configure clients:
    // oidc-provider checks each client's ID-token alg against its keys.
    clientDefaults: {
      grant_types: ['client_credentials'],
      response_types: [],
      id_token_signed_response_alg: sign.alg,
      token_endpoint_auth_method: 'client_secret_basic',
    },
    enabledJWA: {
      idTokenSigningAlgValues: [...new Set(['RS256', 'PS256', 'ES256', 'Ed25519', 'EdDSA', sign.alg])],
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => defaultResourceURL,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resourceIndicator) => {
          if (allowedResources.length && !allowedResources.includes(resourceIndicator)) {
            throw new errors.InvalidTarget(`resource ${resourceIndicator} is not served by this authorization server`);
          }
          return {
            scope: resourceScopes.join(' '),
            audience: resourceIndicator,
            accessTokenFormat: 'jwt',
            accessTokenTTL: ttl,
            jwt: { sign },
          };
        },
      },
    },
    // oidc-provider already sets sub = client_id on client-credentials JWTs
    // (formats/jwt.js: `sub: accountId || clientId`); this only makes sure.
    extraTokenClaims: (ctx, token) => (token.kind === 'ClientCredentials' && token.clientId
      ? { sub: token.clientId } : undefined),
    ttl: {
      AccessToken: ttl,
      ClientCredentials: ttl,
    },
    cookies: { keys: [`authserver-${Math.random().toString(36).slice(2)}`] },
    // Report errors on stderr instead of swallowing them.
    renderError: (ctx, out) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  });
  provider.on('server_error', (ctx, err) => console.error('authserver: server_error', err));
  provider.on('grant.error', (ctx, err) => console.error(`authserver: grant.error ${err.message}: ${err.error_description ?? ''}`));
  return { provider, kids: jwks.keys.map((k) => k.kid) };
}

let current; // { provider, handler, kids }
let issuer;

function reload() {
  const { provider, kids } = buildProvider(issuer);
  current = { provider, handler: provider.callback(), kids };
  return kids;
}

const server = http.createServer((req, res) => {
  if (req.url === '/__authserver/reload') {
    if (!adminToken || req.headers.authorization !== `Bearer ${adminToken}`) {
      res.writeHead(adminToken ? 401 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: adminToken ? 'unauthorized' : 'not_found' }));
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' });
      res.end();
      return;
    }
    req.resume();
    req.on('end', () => {
      try {
        const kids = reload();
        console.error(`authserver: reloaded kids=${kids.join(',')}`);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kids }));
      } catch (err) {
        console.error('authserver: reload failed:', err);
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'reload_failed', error_description: String(err.message ?? err) }));
      }
    });
    return;
  }
  current.handler(req, res);
});

process.on('SIGHUP', () => {
  try {
    const kids = reload();
    console.log(`authserver reloaded kids=${kids.join(',')}`);
  } catch (err) {
    console.error('authserver: reload failed:', err);
  }
});
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    server.close();
    server.closeAllConnections?.();
    process.exit(0);
  });
}

server.on('error', (err) => die(`listen: ${err.message}`));
server.listen(port, '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  try {
    reload();
  } catch (err) {
    die(`cannot configure the provider: ${err.stack ?? err}`);
  }
  console.log(`authserver listening ${issuer}`);
});

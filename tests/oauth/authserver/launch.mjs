// The authorization server of tests/oauth.rs: the pinned oauth2-mock-server on 127.0.0.1
// (an ephemeral port unless --port), with one registered confidential client.
// oauth2-mock-server issues tokens to anyone; the hooks below make it a real one:
// - client_credentials: a wrong client id or secret is refused (401 invalid_client);
//   with --jwt-client-id ID --jwt-public-key PEM, that client authenticates with
//   private_key_jwt instead (RFC 7523: the assertion's signature, iss, sub, aud, exp and
//   jti checked with node:crypto);
// - authorization_code: with --public-client-id ID, that public client signs a person in
//   (the /authorize endpoint approves at once and redirects); the code must come back once,
//   to the same redirect_uri, with the PKCE verifier of an S256 challenge;
// - refresh_token: only refresh tokens it issued, each good once (rotated), or
//   --refresh-token R (long-lived, stored for the public client with scope
//   --refresh-scope, default `mcp`);
// - the token's audience is the `resource` asked for (RFC 8707) and it lives --lifetime
//   seconds. Prints `issuer <URL>` on stdout once listening, then `token <TOKEN>` (and
//   `refresh <TOKEN>`, `code <CODE>`) for each one issued; runs until killed.
//
// With --max-tokens N, token requests after the Nth are refused (400 invalid_grant): a
// refusal in the middle of a run.
//
//   node launch.mjs --client-id ID --client-secret SECRET [--lifetime SECONDS]
//                   [--max-tokens N] [--port N] [--public-client-id ID]
//                   [--refresh-token R] [--refresh-scope S]
//                   [--jwt-client-id ID --jwt-public-key FILE]
import { createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import basicAuth from 'basic-auth';
import { OAuth2Server } from 'oauth2-mock-server';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, word, i, all) =>
    word.startsWith('--') ? [...pairs, [word.slice(2), all[i + 1]]] : pairs, []),
);
const lifetime = Number(args.lifetime ?? 3600);
const maxTokens = Number(args['max-tokens'] ?? Infinity);
let issued = 0;
/** Refresh tokens good for one use: token -> { client, scope }. */
const refreshTokens = new Map();
if (args['refresh-token']) {
  refreshTokens.set(args['refresh-token'], {
    client: args['public-client-id'],
    scope: args['refresh-scope'] ?? 'mcp',
  });
}
/** Codes the /authorize endpoint issued: code -> { client, scope, redirect, pkce }. */
const codes = new Map();
/** Client assertions seen (a jti is good once). */
const seenJti = new Set();
const jwtKey = args['jwt-public-key']
  ? createPublicKey(readFileSync(args['jwt-public-key']))
  : undefined;

/** The client of a token request, from HTTP Basic or the form (client_secret_post). */
function clientOf(req) {
  const basic = basicAuth(req);
  return basic
    ? { id: basic.name, secret: basic.pass }
    : { id: req.body.client_id, secret: req.body.client_secret };
}

/** Whether the request carries a valid private_key_jwt assertion of the JWT client. */
function assertionValid(req) {
  const body = req.body;
  if (!jwtKey || body.client_assertion_type !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer') {
    return false;
  }
  const parts = String(body.client_assertion ?? '').split('.');
  if (parts.length !== 3) return false;
  const [head, claims] = parts.slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url')));
  const data = Buffer.from(`${parts[0]}.${parts[1]}`);
  const signature = Buffer.from(parts[2], 'base64url');
  const ok = head.alg === 'RS256'
    ? verify('sha256', data, jwtKey, signature)
    : head.alg === 'ES256' && verify('sha256', data, { key: jwtKey, dsaEncoding: 'ieee-p1363' }, signature);
  const id = args['jwt-client-id'];
  const audiences = [server.issuer.url, `${server.issuer.url}/token`];
  const now = Date.now() / 1000;
  if (!ok || claims.iss !== id || claims.sub !== id || !audiences.includes(claims.aud)
      || !(claims.exp > now) || !claims.jti || seenJti.has(claims.jti)) {
    return false;
  }
  seenJti.add(claims.jti);
  return (body.client_id ?? id) === id;
}

/** Why the client of this request is refused, or undefined. */
function clientRefused(req) {
  const client = clientOf(req);
  const grant = req.body.grant_type;
  if (grant === 'client_credentials') {
    if (req.body.client_assertion !== undefined) {
      return assertionValid(req) ? undefined : 'client assertion refused';
    }
    return client.id === args['client-id'] && client.secret === args['client-secret']
      ? undefined : 'client authentication failed';
  }
  // authorization_code, refresh_token: the public client, or the confidential one.
  if (client.id === args['public-client-id'] && client.secret === undefined) return undefined;
  if (client.id === args['client-id'] && client.secret === args['client-secret']) return undefined;
  return 'client authentication failed';
}

/** Why the grant itself is refused (400 invalid_grant), or undefined; the scope granted. */
function grantOf(req) {
  const body = req.body;
  const client = clientOf(req).id;
  if (body.grant_type === 'refresh_token') {
    const stored = refreshTokens.get(body.refresh_token);
    if (!stored || stored.client !== client) return { refused: 'unknown or used refresh token' };
    return { scope: body.scope ?? stored.scope };
  }
  if (body.grant_type === 'authorization_code') {
    const stored = codes.get(body.code);
    if (!stored) return { refused: 'unknown or used code' };
    if (stored.client !== client) return { refused: 'the code was issued to another client' };
    if (stored.redirect !== body.redirect_uri) return { refused: 'redirect_uri differs from the authorization request' };
    if (!stored.pkce || !body.code_verifier) return { refused: 'PKCE S256 required' };
    return { scope: stored.scope };
  }
  return { scope: body.scope };
}

const server = new OAuth2Server();
await server.issuer.keys.generate('RS256');
server.service.on('beforeAuthorizeRedirect', (redirect, req) => {
  const code = redirect.url.searchParams.get('code');
  if (!code) return;
  codes.set(code, {
    client: req.query.client_id,
    scope: req.query.scope,
    redirect: req.query.redirect_uri,
    pkce: req.query.code_challenge_method === 'S256' && Boolean(req.query.code_challenge),
  });
  console.log(`code ${code}`);
});
server.service.on('beforeTokenSigning', (token, req) => {
  token.payload.exp = Math.floor(Date.now() / 1000) + lifetime;
  if (req.body.resource) token.payload.aud = req.body.resource;
  token.payload.client_id = clientOf(req).id ?? args['jwt-client-id'];
  const grant = grantOf(req);
  if (grant.scope !== undefined) token.payload.scope = grant.scope;
  // Two tokens fetched in the same second differ (as a real server's do).
  token.payload.jti = randomUUID();
});
server.service.on('beforeResponse', (response, req) => {
  const refused = clientRefused(req);
  if (refused) {
    response.statusCode = 401;
    response.body = { error: 'invalid_client', error_description: refused };
    return;
  }
  const grant = grantOf(req);
  if (grant.refused) {
    response.statusCode = 400;
    response.body = { error: 'invalid_grant', error_description: grant.refused };
    return;
  }
  if (issued >= maxTokens) {
    response.statusCode = 400;
    response.body = { error: 'invalid_grant', error_description: 'no more tokens for this client' };
    return;
  }
  issued += 1;
  response.body.expires_in = lifetime;
  if (grant.scope !== undefined) response.body.scope = grant.scope;
  // Used once: a code, a refresh token (rotated).
  codes.delete(req.body.code);
  // The stored --refresh-token stays good (a long-lived one, kept in a CI secret).
  if (req.body.refresh_token !== args['refresh-token']) refreshTokens.delete(req.body.refresh_token);
  delete response.body.id_token;
  if (response.body.refresh_token) {
    refreshTokens.set(response.body.refresh_token, { client: clientOf(req).id, scope: grant.scope });
    console.log(`refresh ${response.body.refresh_token}`);
  }
  // For the tests: how many tokens were issued, and that none shows in mcpspec's output.
  console.log(`token ${response.body.access_token}`);
});
await server.start(Number(args.port ?? 0), '127.0.0.1');
// 127.0.0.1, not the `localhost` the package names (which may resolve to ::1 first).
server.issuer.url = `http://127.0.0.1:${server.address().port}`;
console.log(`issuer ${server.issuer.url}`);

// The authorization server of tests/oauth.rs: the pinned oauth2-mock-server on 127.0.0.1
// (an ephemeral port unless --port), with one registered confidential client.
// oauth2-mock-server issues tokens to anyone; the hooks below make it a real one for the
// client credentials grant: a wrong client id or secret is refused (401 invalid_client),
// the token's audience is the `resource` asked for (RFC 8707) and it lives --lifetime
// seconds. Prints `issuer <URL>` on stdout once listening, then `token <TOKEN>` for each
// token issued; runs until killed.
//
// With --max-tokens N, token requests after the Nth are refused (400 invalid_grant): a
// refusal in the middle of a run.
//
//   node launch.mjs --client-id ID --client-secret SECRET [--lifetime SECONDS]
//                   [--max-tokens N] [--port N]
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

/** The client of a token request, from HTTP Basic or the form (client_secret_post). */
function clientOf(req) {
  const basic = basicAuth(req);
  return basic
    ? { id: basic.name, secret: basic.pass }
    : { id: req.body.client_id, secret: req.body.client_secret };
}

const server = new OAuth2Server();
await server.issuer.keys.generate('RS256');
server.service.on('beforeTokenSigning', (token, req) => {
  token.payload.exp = Math.floor(Date.now() / 1000) + lifetime;
  if (req.body.resource) token.payload.aud = req.body.resource;
  token.payload.client_id = clientOf(req).id;
  // Two tokens fetched in the same second differ (as a real server's do).
  token.payload.jti = randomUUID();
});
server.service.on('beforeResponse', (response, req) => {
  const client = clientOf(req);
  if (client.id !== args['client-id'] || client.secret !== args['client-secret']) {
    response.statusCode = 401;
    response.body = { error: 'invalid_client', error_description: 'client authentication failed' };
    return;
  }
  if (issued >= maxTokens) {
    response.statusCode = 400;
    response.body = { error: 'invalid_grant', error_description: 'no more tokens for this client' };
    return;
  }
  issued += 1;
  response.body.expires_in = lifetime;
  // For the tests: how many tokens were issued, and that none shows in mcpspec's output.
  console.log(`token ${response.body.access_token}`);
});
await server.start(Number(args.port ?? 0), '127.0.0.1');
// 127.0.0.1, not the `localhost` the package names (which may resolve to ::1 first).
server.issuer.url = `http://127.0.0.1:${server.address().port}`;
console.log(`issuer ${server.issuer.url}`);

// Preloaded (`node --import ./listen-loopback.mjs dist/index.js streamableHttp`) by mcpspec's
// interop tests: server-everything listens on `PORT` on every interface and logs the port it
// was given. This binds it to 127.0.0.1 instead, and prints the address actually bound
// (`PORT=0`: a free port) as the first stdout line, `listening on http://127.0.0.1:N/mcp`.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (port, ...rest) {
  this.once("listening", () => {
    process.stdout.write(`listening on http://127.0.0.1:${this.address().port}/mcp\n`);
  });
  const callback = rest.find((arg) => typeof arg === "function");
  return listen.call(this, port, "127.0.0.1", ...(callback ? [callback] : []));
};

// A receiver in its own process for signal tests: listens with closeOnSignals, reports its URL on stdout,
// and exits 0 once close() has finished (every accepted request answered).
import { connect } from "@loops-sync/db";
import { startReceiver } from "@loops-sync/receiver";

const [databaseUrl, secret] = process.argv.slice(2);
const sql = connect(databaseUrl!, { max: 4 });
const receiver = await startReceiver({
  sql,
  webhookSecrets: [secret!],
  port: 0,
  host: "127.0.0.1",
  closeOnSignals: true,
  onClosed: async () => {
    await sql.end();
    process.stdout.write("closed\n");
  },
});
process.stdout.write(`${receiver.url}\n`);

// Signs a webhook body exactly as Stripe does, with Stripe's own Node SDK.
// Usage: node sign.mjs TIMESTAMP SECRET [SECRET …] < body
// Prints the Stripe-Signature header: `t=TIMESTAMP,v1=…` with one v1 per
// secret (Stripe sends several while an endpoint's secret is rolled). Before
// printing, Stripe's own verifier (webhooks.constructEvent) must accept the
// header for the first secret at that timestamp, or this exits 1.
import Stripe from 'stripe';

const [timestampText, ...secrets] = process.argv.slice(2);
if (!timestampText || secrets.length === 0) {
  console.error('usage: node sign.mjs TIMESTAMP SECRET [SECRET …] < body');
  process.exit(2);
}
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const payload = Buffer.concat(chunks).toString('utf8');
const timestamp = Number(timestampText);
const headers = secrets.map((secret) =>
  Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp }),
);
const v1 = headers.flatMap((h) => h.split(',').filter((p) => p.startsWith('v1=')));
const header = [`t=${timestamp}`, ...v1].join(',');
// Stripe's verifier, with the tolerance measured from the signing time.
Stripe.webhooks.constructEvent(payload, header, secrets[0], 300, undefined, timestamp);
process.stdout.write(header);

import { createServer, type Server } from 'node:http';
import { verifyMemoryEventSignature, verifyMnemoSignature } from 'mnemo/client';

/** A receiver of Mnemo's webhooks: each delivery is verified against its raw body before it is parsed. */
export function webhookReceiver(secret: string, onEvent: (event: { id: string; type: string }) => void): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const signature = req.headers['x-service-signature'] as string | undefined;
      try {
        // G10 (/v1/webhooks) and G11 (/v1/security/webhooks): `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`.
        // Throws unless valid and within 300 s of now. Stripe's scheme, so Stripe's verifier accepts it too.
        if (signature?.startsWith('t=')) verifyMnemoSignature({ payload: rawBody, header: signature, secret });
        // G9 (/api/v1/webhooks): `<hex HMAC-SHA256 of the body>`, keyed with the secret text.
        else if (!verifyMemoryEventSignature({ payload: rawBody, signature, secret })) throw new Error('bad signature');
      } catch {
        res.statusCode = 400;
        return res.end();
      }
      onEvent(JSON.parse(rawBody) as { id: string; type: string }); // deliveries are at least once: drop repeated ids
      res.end('ok');
    });
  });
}

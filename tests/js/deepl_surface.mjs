// deepl-node's public surface against a server: `node deepl_surface.mjs SERVER_URL KEY`.
// Prints one JSON object: what each call returned (or the error's class and message), so that
// tests/test_deepl_node.py can judge it. Every call is the client's own, as its README shows.
import * as deepl from 'deepl-node';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [serverUrl, authKey] = process.argv.slice(2);
const options = { serverUrl, sendPlatformInfo: false, maxRetries: 0 };
const client = new deepl.DeepLClient(authKey, options);
const out = {};

async function step(name, call) {
  try {
    out[name] = await call();
  } catch (err) {
    out[name] = { error: err.constructor.name, message: String(err.message) };
  }
}

await step('text', async () => {
  const r = await client.translateText('Guten Morgen, wann wird mein Paket geliefert?', null, 'en-US');
  return { text: r.text, detected: r.detectedSourceLang, billed: r.billedCharacters };
});
await step('texts', async () => {
  const rs = await client.translateText(['Bonjour tout le monde', 'Hola amigo, ¿cómo estás?', '42'], null, 'de');
  return rs.map((r) => [r.text, r.detectedSourceLang]);
});
await step('modelType', async () => {
  const r = await client.translateText('Guten Tag', 'de', 'en-GB', { modelType: 'latency_optimized' });
  return r.modelTypeUsed;
});
await step('sources', async () => (await client.getSourceLanguages()).length);
await step('targets', async () => (await client.getTargetLanguages()).map((l) => l.code));
await step('usage', async () => {
  const u = await client.getUsage();
  return { count: u.character.count, limit: u.character.limit };
});
await step('badTarget', async () => client.translateText('Hallo', null, 'xx'));
await step('v2glossary', async () => {
  const g = await client.createGlossary('node', 'en', 'de',
    new deepl.GlossaryEntries({ entries: { parcel: 'Paket' } }));
  const listed = (await client.listGlossaries()).some((x) => x.glossaryId === g.glossaryId);
  const entries = (await client.getGlossaryEntries(g)).entries();
  const used = await client.translateText('Where is my parcel?', 'en', 'de', { glossary: g });
  await client.deleteGlossary(g);
  let gone = 'still there';
  try { await client.getGlossary(g.glossaryId); } catch (err) { gone = err.constructor.name; }
  return { count: g.entryCount, listed, entries, used: used.text, gone };
});
await step('v3glossary', async () => {
  const g = await client.createMultilingualGlossary('node-multi', [
    { sourceLangCode: 'en', targetLangCode: 'de', entries: new deepl.GlossaryEntries({ entries: { order: 'Bestellung' } }) },
    { sourceLangCode: 'de', targetLangCode: 'en', entries: new deepl.GlossaryEntries({ entries: { Bestellung: 'order' } }) },
  ]);
  const listed = (await client.listMultilingualGlossaries()).some((x) => x.glossaryId === g.glossaryId);
  const got = await client.getMultilingualGlossary(g.glossaryId);
  const entries = await client.getMultilingualGlossaryDictionaryEntries(g, 'de', 'en');
  await client.deleteMultilingualGlossary(g);
  return {
    pairs: got.dictionaries.map((d) => [d.sourceLangCode, d.targetLangCode, d.entryCount]),
    listed, entries: entries.entries.entries(),
  };
});
await step('missingGlossary', async () => client.getMultilingualGlossary('96ab91fd-e715-41a1-adeb-5d701f84a483'));
await step('document', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'deepl-node-'));
  const input = path.join(dir, 'note.txt');
  const output = path.join(dir, 'note.en.txt');
  fs.writeFileSync(input, 'Guten Morgen, wann wird mein Paket geliefert?');
  const status = await client.translateDocument(input, output, 'de', 'en-US');
  return { done: status.done(), billed: status.billedCharacters, text: fs.readFileSync(output, 'utf8') };
});
await step('rephrase', async () => client.rephraseText('Hello', 'en-US'));
await step('badKey', async () => new deepl.Translator('hymt-nobody', options).getUsage());

console.log(JSON.stringify(out));

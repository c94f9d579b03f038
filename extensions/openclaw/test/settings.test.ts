import { strict as assert } from "node:assert";
import { test } from "node:test";
import { messageText, turnsOf, fitLines, hostTokens } from "../src/messages";
import { DEFAULTS, parseSettings } from "../src/settings";

test("settings: defaults, the agent's workspace, and a bad value named and replaced by its default", () => {
  assert.deepEqual(parseSettings(undefined, "/ws").settings, { ...DEFAULTS, workspace: "/ws" });
  const { settings, warnings } = parseSettings(
    {
      budgetTokens: "lots",
      assembleTimeoutMs: 250,
      workspace: "/notes",
      startServer: "yes",
      colour: "red",
      user: "Sam",
    },
    "/ws",
  );
  assert.equal(settings.budgetTokens, DEFAULTS.budgetTokens);
  assert.equal(settings.assembleTimeoutMs, 250);
  assert.equal(settings.workspace, "/notes");
  assert.equal(settings.startServer, DEFAULTS.startServer);
  assert.equal(settings.user, "Sam");
  assert.equal(warnings.length, 3);
  assert.match(warnings.join("\n"), /"budgetTokens" must be an integer from 1, not "lots"/);
  assert.match(warnings.join("\n"), /unknown setting "colour"/);
});

test("messages: text blocks only, the host's chars / 4 count, lines cut whole", () => {
  assert.equal(
    messageText({
      role: "assistant",
      content: [{ type: "thinking" }, { type: "text", text: "a" }, { type: "text", text: "b" }],
    }),
    "a\n\nb",
  );
  assert.equal(messageText({ role: "compactionSummary", summary: "s" }), "s");
  assert.equal(hostTokens("12345"), 2);
  assert.equal(fitLines("aaaa\nbbbb\ncccc", 2), "aaaa");
  assert.equal(fitLines("aaaaaaaaaaaa", 2), "");
  assert.deepEqual(
    turnsOf(
      [
        { role: "user", content: "  " },
        { role: "custom", content: "x" },
      ],
      "s",
    ),
    [],
  );
});

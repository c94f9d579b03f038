import { strict as assert } from "node:assert";
import { describe, test } from "node:test";
import {
  commandChanged,
  configurationChange,
  DEFAULT_SEARCH_DEBOUNCE_MS,
  initializationOptions,
  readSettings,
  serverSettingsChanged,
  settingsEditor,
} from "../src/core/settings";

const from = (values: Record<string, unknown>) => readSettings((key) => values[key]);

describe("readSettings", () => {
  test("nothing set: defaults, and no server key (botbin.toml decides)", () => {
    const { settings, problems } = from({});
    assert.deepEqual(problems, []);
    assert.deepEqual(settings, {
      serverPath: "",
      pythonPath: "",
      server: {},
      hoverEnabled: true,
      searchDebounceMs: DEFAULT_SEARCH_DEBOUNCE_MS,
    });
    assert.deepEqual(initializationOptions(settings), {});
  });

  test("set keys become botbin.toml keys (topK -> top_k); null means unset", () => {
    const { settings } = from({
      "server.path": " /opt/botbin/bin/botbin ",
      include: ["notes/**/*.md"],
      exclude: null,
      vault: true,
      alpha: 0.5,
      topK: 7,
      "hover.enabled": false,
      "search.debounceMs": 50,
    });
    assert.equal(settings.serverPath, "/opt/botbin/bin/botbin");
    assert.equal(settings.hoverEnabled, false);
    assert.equal(settings.searchDebounceMs, 50);
    assert.deepEqual(initializationOptions(settings), {
      include: ["notes/**/*.md"],
      vault: true,
      alpha: 0.5,
      top_k: 7,
    });
    assert.deepEqual(configurationChange(settings), {
      settings: { botbin: { include: ["notes/**/*.md"], vault: true, alpha: 0.5, top_k: 7 } },
    });
  });

  test("a value of the wrong type is ignored and named", () => {
    const { settings, problems } = from({ include: "memory/*.md", alpha: "high", "hover.enabled": "no" });
    assert.deepEqual(settings.server, {});
    assert.equal(settings.hoverEnabled, true);
    assert.deepEqual(problems, [
      "botbin.include must be a list of globs; ignored",
      "botbin.alpha must be a number; ignored",
      "botbin.hover.enabled must be true or false; ignored",
    ]);
  });

  test("range checks are the server's: an out-of-range number is passed on", () => {
    assert.deepEqual(from({ alpha: 3, topK: 0 }).settings.server, { alpha: 3, top_k: 0 });
  });
});

describe("what a change needs", () => {
  const base = from({ topK: 5 }).settings;

  test("a new server path or Python restarts the server", () => {
    assert.equal(commandChanged(base, from({ topK: 5, pythonPath: "/venv/bin/python" }).settings), true);
    assert.equal(commandChanged(base, from({ topK: 5, "server.path": "botbin" }).settings), true);
    assert.equal(commandChanged(base, from({ topK: 9 }).settings), false);
  });

  test("a new botbin.toml key is sent; hover and debounce stay in the client", () => {
    assert.equal(serverSettingsChanged(base, from({ topK: 9 }).settings), true);
    assert.equal(serverSettingsChanged(base, from({}).settings), true);
    assert.equal(serverSettingsChanged(base, from({ topK: 5, "hover.enabled": false }).settings), false);
    assert.equal(serverSettingsChanged(base, from({ topK: 5, "search.debounceMs": 10 }).settings), false);
  });
});

test("Open settings: the Remote tab in a remote window (where machine settings apply), else the User tab", () => {
  assert.deepEqual(settingsEditor("ssh-remote"), [
    "workbench.action.openRemoteSettings",
    { query: "@ext:botbin.botbin" },
  ]);
  assert.deepEqual(settingsEditor(undefined), ["workbench.action.openSettings", "@ext:botbin.botbin"]);
});

// Unit tests of the intel gate: on / off / auto, the nested probe, and staying out of a language.
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import { IntelGate, intelMode } from "../src/intelGate";

describe("IntelGate", () => {
  it("on and off need no probe", async () => {
    const never = (): Promise<number> => Promise.reject(new Error("not asked"));
    assert.equal(await new IntelGate("on").answers("hover", "python", "k", never), true);
    assert.equal(await new IntelGate("off").answers("hover", "python", "k", never), false);
    assert.equal(new IntelGate("off").offered, false);
    assert.equal(intelMode("bogus"), "auto");
  });

  it("auto answers where no other provider does; the nested call made by the probe gets nothing", async () => {
    const gate = new IntelGate("auto");
    let nested: boolean | undefined;
    const answered = await gate.answers("definition", "python", "k", async () => {
      nested = await gate.answers("definition", "python", "k", () => Promise.resolve(0)); // ided's own, reached through VS Code
      return 0;
    });
    assert.equal(nested, false);
    assert.equal(answered, true);
  });

  it("auto stays out of a language once another provider answered there", async () => {
    const gate = new IntelGate("auto");
    assert.equal(await gate.answers("hover", "python", "a", () => Promise.resolve(1)), false);
    let asked = false;
    const again = await gate.answers("hover", "python", "b", () => {
      asked = true;
      return Promise.resolve(0);
    });
    assert.equal(again, false);
    assert.equal(asked, false);
    assert.equal(await gate.answers("hover", "go", "c", () => Promise.resolve(0)), true);
  });
});

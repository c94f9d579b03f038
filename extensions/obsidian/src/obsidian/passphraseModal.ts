/**
 * Unlock encrypted memory: a password box for the passphrase of the vault's encrypted store. The passphrase
 * goes to `submit` and nowhere else: the plugin keeps it in memory for this session, never in data.json.
 */
import { type App, Modal, Setting } from "obsidian";

export class PassphraseModal extends Modal {
  private value = "";

  constructor(
    app: App,
    private readonly submit: (passphrase: string) => unknown,
  ) {
    super(app);
  }

  override onOpen(): void {
    this.titleEl.setText("Unlock encrypted memory");
    this.contentEl.empty();
    this.contentEl.createEl("p", {
      text: "botbin keeps this vault's memory encrypted. The passphrase is held in memory until Obsidian closes; it is never saved.",
    });
    new Setting(this.contentEl)
      .setName("Passphrase")
      .addText((text) => {
        text.inputEl.type = "password";
        text.inputEl.addEventListener("keydown", (event: KeyboardEvent) => {
          if (event.key !== "Enter") return;
          event.preventDefault();
          this.done();
        });
        text.onChange((value) => (this.value = value));
        text.inputEl.focus();
      })
      .addButton((button) =>
        button
          .setButtonText("Unlock")
          .setCta()
          .onClick(() => this.done()),
      );
  }

  override onClose(): void {
    this.value = "";
    this.contentEl.empty();
  }

  private done(): void {
    const passphrase = this.value;
    if (!passphrase) return;
    this.close();
    void this.submit(passphrase);
  }
}

// The dialog and settings part of the `obsidian` stand-in (./obsidian.ts): Modal, SuggestModal, Setting
// and its components.

import { FakeElement } from "./dom";
import type { App, Plugin } from "./obsidian";

export class Modal {
  isOpen = false;
  readonly titleEl = new FakeElement();
  readonly contentEl = new FakeElement();
  constructor(readonly app: App) {}
  open(): void {
    this.isOpen = true;
    this.onOpen();
  }
  close(): void {
    this.isOpen = false;
    this.onClose();
  }
  onOpen(): void {}
  onClose(): void {}
}

export abstract class SuggestModal<T> extends Modal {
  limit = 100;
  emptyStateText = "";
  placeholder = "";
  instructions: { command: string; purpose: string }[] = [];
  /** What the list shows now (the last suggestions a test awaited). */
  shown: T[] = [];
  setPlaceholder(placeholder: string): void {
    this.placeholder = placeholder;
  }
  setInstructions(instructions: { command: string; purpose: string }[]): void {
    this.instructions = instructions;
  }
  abstract getSuggestions(query: string): T[] | Promise<T[]>;
  abstract renderSuggestion(value: T, el: FakeElement): void;
  abstract onChooseSuggestion(item: T, evt: unknown): void;
  /** Test helper: what one row renders as. */
  rendered(value: T): FakeElement {
    const el = new FakeElement();
    this.renderSuggestion(value, el);
    return el;
  }
  /** Test helper: Enter on row `index` (Obsidian closes the modal, then calls onChooseSuggestion). */
  choose(index: number): void {
    const item = this.shown[index];
    if (item === undefined) throw new Error(`no row ${index}`);
    this.close();
    this.onChooseSuggestion(item, {});
  }
}

export class PluginSettingTab {
  readonly containerEl = new FakeElement();
  constructor(
    readonly app: App,
    readonly plugin: Plugin,
  ) {}
  display(): void {}
  hide(): void {}
}

export class TextComponent {
  value = "";
  placeholder = "";
  readonly inputEl = new FakeElement("input");
  private listener: ((value: string) => unknown) | undefined;
  setPlaceholder(placeholder: string): this {
    this.placeholder = placeholder;
    return this;
  }
  setValue(value: string): this {
    this.value = value;
    return this;
  }
  onChange(listener: (value: string) => unknown): this {
    this.listener = listener;
    return this;
  }
  /** Test helper: the user types `value` into the box. */
  input(value: string): void {
    this.value = value;
    this.listener?.(value);
  }
}
export class TextAreaComponent extends TextComponent {}

export class ButtonComponent {
  text = "";
  cta = false;
  private listener: (() => unknown) | undefined;
  setButtonText(text: string): this {
    this.text = text;
    return this;
  }
  setCta(): this {
    this.cta = true;
    return this;
  }
  onClick(listener: () => unknown): this {
    this.listener = listener;
    return this;
  }
  /** Test helper: the user clicks the button. */
  click(): void {
    this.listener?.();
  }
}

export class Setting {
  static all: Setting[] = [];
  name = "";
  desc = "";
  readonly components: TextComponent[] = [];
  readonly buttons: ButtonComponent[] = [];
  constructor(readonly containerEl: FakeElement) {
    Setting.all.push(this);
  }
  setName(name: string): this {
    this.name = name;
    return this;
  }
  setDesc(desc: string): this {
    this.desc = desc;
    return this;
  }
  addText(build: (text: TextComponent) => unknown): this {
    const text = new TextComponent();
    this.components.push(text);
    build(text);
    return this;
  }
  addTextArea(build: (text: TextAreaComponent) => unknown): this {
    const text = new TextAreaComponent();
    this.components.push(text);
    build(text);
    return this;
  }
  addButton(build: (button: ButtonComponent) => unknown): this {
    const button = new ButtonComponent();
    this.buttons.push(button);
    build(button);
    return this;
  }
}

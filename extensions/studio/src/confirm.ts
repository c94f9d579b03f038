// The confirmation every writing action asks for: a modal <dialog> (keyboard: Esc cancels, Tab stays inside, the
// safe choice has the focus), answered true only by its confirm button.
import { h } from "./dom";

export function confirmDialog(title: string, message: string, action: string): Promise<boolean> {
  const heading = h("h2", { id: "confirm-title" }, title);
  const body = h("p", { id: "confirm-body" }, message);
  const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
  const ok = h("button", { type: "button", class: "danger", "data-confirm": "yes" }, action);
  const dialog = h(
    "dialog",
    { "aria-labelledby": "confirm-title", "aria-describedby": "confirm-body", class: "confirm" },
    heading,
    body,
    h("div", { class: "buttons" }, cancel, ok),
  );
  document.body.append(dialog);
  return new Promise((resolve) => {
    const close = (answer: boolean): void => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    cancel.addEventListener("click", () => close(false));
    ok.addEventListener("click", () => close(true));
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      close(false);
    });
    dialog.showModal();
    cancel.focus();
  });
}

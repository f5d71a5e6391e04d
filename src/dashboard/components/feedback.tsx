import type { ReactNode } from "react";

/** The error of a form or a list, read out when it appears; nothing when there is none. */
export function ErrorAlert({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}

/**
 * A secret the API shows only once (an API key, a webhook's signing secret): what it is, the value,
 * and Done to put it away.
 */
export function SecretOnce(props: { message: string; secret: string; testId?: string; onDone: () => void }) {
  return (
    <div className="secret" role="status">
      <p>{props.message}</p>
      <code data-testid={props.testId}>{props.secret}</code>
      <button type="button" onClick={props.onDone}>
        Done
      </button>
    </div>
  );
}

/** A button that asks `question` first and runs `onConfirm` only when the user agrees. */
export function ConfirmButton(props: {
  question: string;
  onConfirm: () => unknown;
  children: ReactNode;
  className?: string;
  disabled?: boolean;
  "aria-label"?: string;
}) {
  return (
    <button
      type="button"
      className={props.className}
      disabled={props.disabled}
      aria-label={props["aria-label"]}
      onClick={() => {
        if (window.confirm(props.question)) void props.onConfirm();
      }}
    >
      {props.children}
    </button>
  );
}

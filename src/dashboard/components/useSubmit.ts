import { type FormEvent, useState } from "react";
import { ApiError } from "../api";

/**
 * A create form's submit: clears the error, hands `send` the form's data, and when the API refuses
 * shows its message (`fallback` for any other failure). `send` goes on to the new item's page.
 */
export function useSubmit(send: (form: FormData) => Promise<void>, fallback: string) {
  const [error, setError] = useState<string | null>(null);
  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(null);
    try {
      await send(form);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : fallback);
    }
  }
  return { error, onSubmit };
}

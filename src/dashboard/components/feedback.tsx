/** The error of a form or a list, read out when it appears; nothing when there is none. */
export function ErrorAlert({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}


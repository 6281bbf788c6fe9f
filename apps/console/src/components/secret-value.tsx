import { CopyButton } from './copy-button.tsx';

/**
 * A secret the page shows in full (a new token, a TOTP key, a webhook secret) with its copy
 * button beside it: `{testId}` and `{testId}-copy`.
 */
export function SecretValue({
  value,
  testId,
  className = '',
}: {
  value: string;
  testId: string;
  className?: string;
}) {
  return (
    <div className={`d-flex flex-wrap align-items-center gap-2 ${className}`.trim()}>
      <code className="secret-value" data-testid={testId}>
        {value}
      </code>
      <CopyButton text={value} testId={`${testId}-copy`} />
    </div>
  );
}

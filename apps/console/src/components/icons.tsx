import type { ReactNode } from 'react';

/** The few icons the console needs, drawn inline rather than pulled in as an icon font. */
const SHAPES: Record<'globe' | 'person' | 'external', ReactNode> = {
  globe: (
    <>
      <circle cx="8" cy="8" r="6.5" />
      <ellipse cx="8" cy="8" rx="2.75" ry="6.5" />
      <path d="M1.5 8h13M2.6 4.75h10.8M2.6 11.25h10.8" />
    </>
  ),
  person: (
    <>
      <circle cx="8" cy="5.25" r="2.75" />
      <path d="M2.5 14.5c.6-2.9 2.8-4.5 5.5-4.5s4.9 1.6 5.5 4.5" />
    </>
  ),
  external: <path d="M9.5 2.5h4v4M13.5 2.5 7.5 8.5M11.5 9.5v4h-9v-9h4" />,
};

export function Icon({ name, className = '' }: { name: keyof typeof SHAPES; className?: string }) {
  return (
    <svg
      xmlns="http://www.w3.org/2000/svg"
      width="1em"
      height="1em"
      viewBox="0 0 16 16"
      fill="none"
      stroke="currentColor"
      strokeWidth="1.3"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      className={`icon ${className}`.trim()}
    >
      {SHAPES[name]}
    </svg>
  );
}

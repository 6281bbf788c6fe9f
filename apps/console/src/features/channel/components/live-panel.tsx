import type { ReactNode, Ref } from 'react';
import Card from 'react-bootstrap/Card';

/** One of a channel's side-by-side live panels (publisher, HLS player, WebRTC player). */
export function LivePanel({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Card className="shadow-sm border-0 h-100">
      <Card.Body>
        <h3 className="h6">{title}</h3>
        {children}
      </Card.Body>
    </Card>
  );
}

/** A player's video: muted so that it may start by itself, inline on phones. */
export function PlayerVideo({
  ref,
  testId,
  hidden,
}: {
  ref: Ref<HTMLVideoElement>;
  testId: string;
  hidden?: boolean;
}) {
  return (
    <video
      ref={ref}
      className="channel-video"
      controls
      muted
      playsInline
      hidden={hidden}
      data-testid={testId}
    />
  );
}

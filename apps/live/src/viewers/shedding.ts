/** Whose viewer one is: the organization and channel of the broadcast it watches. */
export interface Audience {
  organizationId: number;
  channelId: string;
}

/**
 * Which `count` of `members` a starving thread sheds: one at a time, the newest of the largest
 * audience (channel) of the organization with the most left. The tenant with the most viewers
 * gives first, whether its crowd watches one channel or many, so that it does not cost another
 * tenant's few viewers their stream; within a tenant the largest audience gives first, and
 * within an audience those who watched longest keep theirs.
 */
export function toShed<T>(
  members: Iterable<T>,
  count: number,
  audienceOf: (member: T) => Audience,
  admittedAt: (member: T) => number,
): T[] {
  const organizations = new Map<number, { left: number; channels: Map<string, T[]> }>();
  for (const member of members) {
    const { organizationId, channelId } = audienceOf(member);
    let organization = organizations.get(organizationId);
    if (!organization) organizations.set(organizationId, (organization = { left: 0, channels: new Map() }));
    organization.left++;
    const channel = organization.channels.get(channelId);
    if (channel) channel.push(member);
    else organization.channels.set(channelId, [member]);
  }
  // Oldest first: each audience's newest is its last.
  for (const { channels } of organizations.values())
    for (const channel of channels.values()) channel.sort((a, b) => admittedAt(a) - admittedAt(b));
  const shed: T[] = [];
  while (shed.length < count) {
    const organization = largest(organizations.values(), ({ left }) => left);
    if (!organization) break;
    shed.push(largest(organization.channels.values(), (channel) => channel.length)!.pop()!);
    organization.left--;
  }
  return shed;
}

/** The first of `groups` with the most members, none when all are empty. */
function largest<G>(groups: Iterable<G>, sizeOf: (group: G) => number): G | undefined {
  let found: G | undefined;
  let most = 0;
  for (const group of groups) {
    const size = sizeOf(group);
    if (size > most) [found, most] = [group, size];
  }
  return found;
}

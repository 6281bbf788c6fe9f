import { PageHeader } from '../components/page-header.tsx';
import { useRouteTitle } from './route-title.ts';

/** A screen whose body a later issue builds: its place in the console, guarded, with its title. */
export function TitlePage() {
  return <PageHeader title={useRouteTitle()} />;
}

/** The heading every page starts with. */
export function PageHeader({ title }: { title: string }) {
  return (
    <header className="page-header mb-4">
      <h1 className="h3 mb-0">{title}</h1>
    </header>
  );
}
